"""What a page of the desk costs each Chromium the browser tests could drive: the full browser in
headless mode (/usr/bin/chromium, what a user has) and Chromium's headless build
(/usr/bin/chromium-headless-shell, what the browser tests drive; Playwright's own headless default).

One desk (`streamlit run abeq/desk/app.py` on a fresh database); for each browser, in turns (ABAB…),
a fresh context opens the desk, waits until it is idle, then visits Transfer set, Run, Review and
Documents from the sidebar, waiting for each to draw. The figure is the CPU seconds of every process
of that browser (from /proc/<pid>/stat) over the visit, per round; the desk's own CPU is not in it.

Run: .venv/bin/python bench/bench_browsers.py [--rounds 3]   (writes bench/results/browsers.json)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from e2e.helpers import CHROMIUM, CHROMIUM_ARGS, FULL_CHROMIUM, desk, nav, new_context, settle  # noqa: E402

from abeq.testing.process import process_cpu  # noqa: E402

RESULTS = ROOT / "bench" / "results"
PAGES = ("Transfer set", "Run", "Review", "Documents")


def browser_cpu(binary: str) -> float:
    """CPU seconds so far of every live process of `binary` (Debian's /usr/bin wrappers exec
    /usr/lib/chromium/<the same name>, and the browser's helpers run that file too)."""
    name = Path(binary).name.encode()
    total = 0.0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            # a helper process rewrites its command line as one string: "<file> --type=renderer …"
            exe = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0].split(b" ", 1)[0]
        except OSError:
            continue
        if Path(exe.decode(errors="replace")).name.encode() == name:
            total += process_cpu(int(pid)) or 0.0  # None: it ended in between
    return total


def visit(browser, url: str):
    """The visit, in a fresh context; the context is returned open (a closed page's renderer is gone
    from /proc, and its CPU with it)."""
    ctx = new_context(browser)
    page = ctx.new_page()
    page.goto(url)
    page.get_by_role("heading", name="Documents", exact=True).wait_for()
    settle(page)
    for title in PAGES:
        nav(page, title)
    return ctx


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    binaries = {"chromium (full, headless mode)": FULL_CHROMIUM, "chromium-headless-shell": CHROMIUM}
    spent: dict[str, list[float]] = {k: [] for k in binaries}
    with tempfile.TemporaryDirectory() as tmp, desk(Path(tmp) / "desk.db") as url, sync_playwright() as pw:
        browsers = {k: pw.chromium.launch(executable_path=b, args=CHROMIUM_ARGS) for k, b in binaries.items()}
        for b in browsers.values():
            visit(b, url).close()  # warm: the desk's first script run and each browser's caches
        for _ in range(args.rounds):
            for label, b in browsers.items():
                before, t0 = browser_cpu(binaries[label]), time.monotonic()
                ctx = visit(b, url)
                spent[label].append(round(browser_cpu(binaries[label]) - before, 2))
                ctx.close()
                print(
                    f"{label}: {spent[label][-1]:.2f} s CPU ({time.monotonic() - t0:.1f} s wall)", flush=True
                )
        for b in browsers.values():
            b.close()
    out = {
        "what": "CPU seconds of the browser's processes for one visit: open the desk, then "
        + ", ".join(PAGES),
        "rounds": args.rounds,
        "cpu_seconds": spent,
        "median": {k: statistics.median(v) for k, v in spent.items()},
    }
    full, shell = (out["median"][k] for k in binaries)
    out["shell_over_full"] = round(shell / full, 3)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "browsers.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out["median"]), f"headless shell / full: {out['shell_over_full']:.2f}")


if __name__ == "__main__":
    main()
