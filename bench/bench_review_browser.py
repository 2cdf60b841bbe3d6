"""Time the Review page as a reviewer waits for it: a synthetic 200-case run in a real Chromium, at
1440x900 and at 1024x768 in the same run (one server, one browser, the sizes measured in turn).

First case = from navigation to the case open with its transcripts drawn (the desk settled: no
rerun running, nothing stale). Next = from the click to the next case drawn and settled. Beside
them bench_review.py gives the server's share (AppTest, no browser).

Run: .venv/bin/python bench/bench_review_browser.py   (targets: first case <= 2 s, Next <= 0.5 s)
Writes bench/results/review_browser.json.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from abeq.results.store.store import Store  # noqa: E402
from abeq.testing.process import wait_healthy  # noqa: E402
from abeq.testing.synthetic import synthetic_run  # noqa: E402

CASES = 200
NEXTS = 9
LOADS = 3
TARGET_FIRST_S, TARGET_NEXT_S = 2.0, 0.5
SIZES = [(1440, 900), (1024, 768)]
CHROMIUM = "/usr/bin/chromium"
QUEUE = "(b.getAttribute('aria-label') || '').includes('queue order')"  # the case picker
SETTLED = """() => !document.querySelector('[data-testid="stStatusWidgetRunningIcon"]')
                   && !document.querySelector('[data-stale="true"]')"""


def _desk(db: str) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "ABEQ_DB": db, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env["LITELLM_OFFLINE_MODE"] = "true"
    cmd = [sys.executable, "-m", "streamlit", "run", "abeq/desk/app.py", "--server.port", str(port)]
    cmd += ["--server.address", "127.0.0.1", "--server.headless", "true"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
    except RuntimeError as e:
        proc.kill()
        raise SystemExit(str(e)) from None
    return proc, url


def _drawn(page, case_id: str) -> None:
    """Until case_id is open, its transcripts are drawn and the desk has settled."""
    page.wait_for_function(
        """(id) => [...document.querySelectorAll('input[role="combobox"]')]
                     .some(b => b.value === id && QUEUE)
                   && document.querySelector('[data-testid="stTabs"]')""".replace("QUEUE", QUEUE),
        arg=case_id,
        timeout=60_000,
    )
    page.wait_for_function(SETTLED, timeout=60_000)


def _queue(page) -> str:
    return page.evaluate(
        """() => [...document.querySelectorAll('input[role="combobox"]')]
                 .find(b => (b.getAttribute('aria-label') || '').includes('queue order')).value"""
    )


def _measure(browser, url: str, run_id: int, size: tuple[int, int], warm: bool) -> dict:
    """First case (median of LOADS fresh contexts; a first, uncounted load warms the server when
    `warm`) and Next (NEXTS clicks) at one screen size."""
    first: list[float] = []
    page = None
    for i in range(LOADS + int(warm)):
        ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
        page = ctx.new_page()
        t = time.perf_counter()
        page.goto(f"{url}/review?review=bench&run={run_id}&case=case-0002")
        _drawn(page, "case-0002")
        if i or not warm:
            first.append(time.perf_counter() - t)
        if i < LOADS + int(warm) - 1:
            ctx.close()
    assert page is not None
    nexts = []
    for _ in range(NEXTS):
        before = _queue(page)
        t = time.perf_counter()
        page.get_by_role("button", name="Next →").click()
        page.wait_for_function(
            """(id) => [...document.querySelectorAll('input[role="combobox"]')]
                       .some(b => (b.getAttribute('aria-label') || '').includes('queue order')
                                  && b.value !== id)""",
            arg=before,
            timeout=60_000,
        )
        page.wait_for_function(SETTLED, timeout=60_000)
        nexts.append(time.perf_counter() - t)
    page.context.close()
    return {
        "first_case_s": [round(x, 3) for x in first],
        "first_case_median_s": round(statistics.median(first), 3),
        "next_s": [round(x, 3) for x in nexts],
        "next_median_s": round(statistics.median(nexts), 3),
        "next_max_s": round(max(nexts), 3),
    }


def main() -> int:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "bench.db")
        store = Store(db)
        run_id = synthetic_run(store, CASES, review="bench")
        store.close()
        proc, url = _desk(db)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                sizes = {
                    f"{w}x{h}": _measure(browser, url, run_id, (w, h), warm=not i)
                    for i, (w, h) in enumerate(SIZES)
                }
                browser.close()
        finally:
            proc.terminate()
            proc.wait(10)
    wide = sizes["1440x900"]  # the figures read before there were two sizes
    out = {
        "bench": "review_browser",
        "cases": CASES,
        "load_1min": round(os.getloadavg()[0], 2),
        **wide,
        "sizes": sizes,
        "target_first_s": TARGET_FIRST_S,
        "target_next_s": TARGET_NEXT_S,
    }
    out["target_met"] = all(
        v["first_case_median_s"] <= TARGET_FIRST_S and v["next_median_s"] <= TARGET_NEXT_S
        for v in sizes.values()
    )
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "review_browser.json").write_text(json.dumps(out, indent=2) + "\n")
    for size, v in sizes.items():
        print(
            f"Review page in Chromium at {size}, {CASES}-case run: "
            f"first case {v['first_case_median_s']:.2f} s "
            f"(median of {LOADS}), Next {v['next_median_s']:.2f} s median, {v['next_max_s']:.2f} s max "
            f"over {NEXTS} (targets <= {TARGET_FIRST_S} s, <= {TARGET_NEXT_S} s)"
        )
    return 0 if out["target_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
