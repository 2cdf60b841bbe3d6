"""Time the Review page on a synthetic 1,000-case run (server time, through AppTest).

Run: .venv/bin/python bench/bench_review.py   (target: <= 1 s per render)
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from abeq.results.reports.report import build_report  # noqa: E402
from abeq.results.store.store import Store  # noqa: E402
from abeq.testing.synthetic import synthetic_run  # noqa: E402

CASES = 1000
RUNS = 7
TARGET_S = 1.0


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "bench.db")
        os.environ["ABEQ_DB"] = db
        store = Store(db)
        t = time.perf_counter()
        run_id = synthetic_run(store, CASES)
        print(f"filled {CASES} cases in {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        build_report(store, run_id)
        print(f"build_report alone: {(time.perf_counter() - t) * 1000:.0f} ms")

        at = AppTest.from_file(str(ROOT / "abeq" / "desk" / "app.py"), default_timeout=60)
        at.run()
        at.switch_page("desk_pages/4_review.py").run()  # warm: imports and first render
        assert not at.exception, at.exception
        times = []
        for i in range(RUNS):
            if i % 2:  # alternate between re-rendering and moving to the next case
                at.button(key="next").click()
            t = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - t)
            assert not at.exception, at.exception
        med, worst = statistics.median(times), max(times)
        print(
            f"Review page, {CASES}-case run: median {med * 1000:.0f} ms, max {worst * 1000:.0f} ms "
            f"over {RUNS} renders (target <= {TARGET_S * 1000:.0f} ms)"
        )
        return 0 if worst <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
