"""What the desk's process spends while a run's progress redraws, with the heap settled (abeq's
default: `abeq.models.bootstrap.settle_heap` freezes what is alive after the desk's first script and
after litellm's import) and without (the same desk with `gc.freeze` made a no-op, as before).

Streamlit collects garbage fully after every script and fragment run (`runner.postScriptGC`); the
Run page's progress and the next-step line redraw every one to two seconds while a run goes, and
once a run has imported litellm a full collection walks ~440,000 objects.

1. In-process: a full collection's CPU time after `import litellm`, then after `settle_heap()`
   (median of 5 each, a fresh process).
2. The desk: `streamlit run abeq/desk/app.py` on a fresh database, Chromium confirms the bundled set
   and starts a run on the scripted model answering each call after ABEQ_SCRIPTED_LATENCY seconds
   (10: the run lasts ~30 s, as a slow model's would); the desk process's CPU seconds (from
   /proc/<pid>/stat) from Start to "7/7 cases · finished", and the run's wall time. Settled and not,
   ABBA.

Run: .venv/bin/python bench/bench_desk_gc.py [--latency 10]   (writes bench/results/desk_gc.json)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from e2e.helpers import CHROMIUM, CHROMIUM_ARGS, desk, nav, settle  # noqa: E402

RESULTS = ROOT / "bench" / "results"

GC_PROBE = """
import gc, statistics, time
from abeq.models import bootstrap
bootstrap.settle_heap = lambda: None   # measured below, by hand
bootstrap.litellm()
def full():
    t = time.process_time(); gc.collect(2); return time.process_time() - t
before = statistics.median(full() for _ in range(5)); tracked = len(gc.get_objects())
gc.collect(); gc.freeze()
after = statistics.median(full() for _ in range(5))
print(before, after, tracked, len(gc.get_objects()))
"""

# put first on the desk's PYTHONPATH for the "not settled" arm: the desk as it was before
NO_FREEZE = "import gc\ngc.freeze = lambda: None\n"


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _desk_pid(db: Path) -> int:
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if (
                    b"streamlit" in (proc / "cmdline").read_bytes()
                    and str(db).encode() in (proc / "environ").read_bytes()
                ):
                    return int(proc.name)
            except OSError:
                continue
    raise RuntimeError(f"no desk process on {db}")


def _one_run(browser, work: Path, label: str, latency: float, settled: bool) -> dict:
    db = work / f"{label}.db"
    env = {"ABEQ_SCRIPTED_LATENCY": str(latency)}
    if not settled:
        hook = work / "no-freeze"
        hook.mkdir(exist_ok=True)
        (hook / "sitecustomize.py").write_text(NO_FREEZE)
        env["PYTHONPATH"] = os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")])
    with desk(db, env=env) as url:
        pid = _desk_pid(db)
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.set_default_timeout(120_000)
        page.goto(url)
        page.get_by_role("heading", name="Documents", exact=True).wait_for()
        nav(page, "Transfer set")
        page.get_by_role("button", name="Confirm", exact=True).click()
        page.get_by_text("Confirmed 20").wait_for()
        nav(page, "Run")
        for field_label in ("Runner model (any litellm model string)", "Judge model"):
            field = page.get_by_label(field_label)
            field.fill("scripted/rules")
            field.press("Enter")
            settle(page)
        cpu0, t0 = _cpu(pid), time.monotonic()
        page.get_by_role("button", name="Start run").click()
        page.get_by_text("7/7 cases · finished").wait_for(timeout=600_000)
        cpu, wall = _cpu(pid) - cpu0, time.monotonic() - t0
        out = {"settled": settled, "desk_cpu_s": round(cpu, 2), "wall_s": round(wall, 2)}
        page.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--latency", type=float, default=10.0)
    args = ap.parse_args()
    probe = subprocess.run(
        [sys.executable, "-c", GC_PROBE], capture_output=True, text=True, check=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    before, after, tracked, left = probe.stdout.split()
    result: dict = {
        "full_collection_after_litellm_cpu_s": round(float(before), 4),
        "full_collection_settled_cpu_s": round(float(after), 4),
        "tracked_objects_after_litellm": int(tracked),
        "tracked_objects_settled": int(left),
        "latency_s": args.latency,
        "runs": [],
    }
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for i, settled in enumerate((False, True, True, False)):  # ABBA
            run = _one_run(browser, Path(tmp), f"run{i}", args.latency, settled)
            print(run, flush=True)
            result["runs"].append(run)
        browser.close()
    for key, settled in (("settled", True), ("not_settled", False)):
        mine = [r for r in result["runs"] if r["settled"] is settled]
        result[key] = {
            "desk_cpu_s": statistics.median(r["desk_cpu_s"] for r in mine),
            "wall_s": statistics.median(r["wall_s"] for r in mine),
        }
    result["load_average_1m"] = round(os.getloadavg()[0], 2)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "desk_gc.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}, indent=2))


if __name__ == "__main__":
    main()
