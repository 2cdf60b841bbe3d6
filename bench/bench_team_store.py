"""A team's store: sqlite and PostgreSQL in one run, on this machine.

  review     the Review page's server time (AppTest) on a 10,000-case run, each backend: 5 renders
             after the first load, Next between them (target <= 1 s); the first load and 3 Agrees
             (the action recorded, the page drawn on the next case) beside them
  overhead   bench_overhead's 200-case (600-call) run at 250 ms latency on the fast path, its store
             a sqlite file then a PostgreSQL database: the ratio of the two (target <= 1.1)
  teacher    two `abeq run` processes of one original over the same 50 cases at once (scripted model,
             50 ms a reply): teacher calls made in all (target 50, not 100), each backend

The PostgreSQL server is Debian's package started for the bench (abeq.testing.pg_server) on loopback.
Run: .venv/bin/python bench/bench_team_store.py [--parts review,overhead,teacher] [--cases 10000]
Writes bench/results/team_store.json.
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
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from abeq.results.store.postgres import close_pools, create_database  # noqa: E402
from abeq.results.store.store import Store  # noqa: E402
from abeq.testing import pg_server  # noqa: E402

TARGET_REVIEW_S, TARGET_RATIO, RENDERS = 1.0, 1.1, 5
EXAMPLE = ROOT / "abeq" / "examples" / "release-notes"


def review(db: str, cases: int) -> dict:
    from streamlit.testing.v1 import AppTest

    from abeq.testing.synthetic import synthetic_run

    os.environ["ABEQ_DB"] = db
    t = time.perf_counter()
    synthetic_run(Store(db), cases)
    filled = time.perf_counter() - t
    at = AppTest.from_file(str(ROOT / "abeq" / "desk" / "app.py"), default_timeout=300)
    at.run()
    at.switch_page("desk_pages/4_review.py")
    t = time.perf_counter()
    at.run()  # the first load (imports, the run's report), timed apart
    first = time.perf_counter() - t
    assert not at.exception, at.exception
    times = []
    for i in range(RENDERS):
        if i % 2:
            at.button(key="next").click()
        t = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t)
        assert not at.exception, at.exception
    at.text_input(key="ov_reviewer").input("bench")
    agrees = []  # a reviewer's Agree: the action recorded, the page drawn again on the next case
    for _ in range(3):
        at.button(key="agree").click()
        t = time.perf_counter()
        at.run()
        agrees.append(time.perf_counter() - t)
        assert not at.exception, at.exception
    return {
        "cases": cases,
        "fill_s": round(filled, 1),
        "first_load_s": round(first, 3),
        "median_s": round(statistics.median(times), 3),
        "max_s": round(max(times), 3),
        "agree_median_s": round(statistics.median(agrees), 3),
        "agree_max_s": round(max(agrees), 3),
        "met": max(times) <= TARGET_REVIEW_S,
    }


def overhead(server_url: str) -> dict:
    import bench_overhead as bo

    from abeq.testing.process import LoopbackProcess

    out = {}
    with LoopbackProcess(latency=0.25) as srv:
        for backend in ("sqlite", "postgresql"):
            if backend == "postgresql":
                os.environ["ABEQ_BENCH_PG"] = server_url
            else:
                os.environ.pop("ABEQ_BENCH_PG", None)
            out[backend] = bo.measure("fast", srv.url, 0.25, bo.CASES, bo.CONCURRENCY, srv.proc.pid)
            print(f"  overhead on {backend}: ratio {out[backend]['ratio']}", file=sys.stderr, flush=True)
    os.environ.pop("ABEQ_BENCH_PG", None)
    rel = out["postgresql"]["measured_s"] / out["sqlite"]["measured_s"]
    return {**out, "postgresql_over_sqlite": round(rel, 3), "met": rel <= TARGET_RATIO}


def teacher(db: str, tmp: str, cases: int = 50) -> dict:
    ts = json.loads((EXAMPLE / "transfer-set.json").read_text())
    base = ts["cases"]
    ts["cases"] = [
        {
            **base[i % len(base)],
            "id": f"{base[i % len(base)]['id']}-{i:02d}",
            "input": base[i % len(base)]["input"] + f"\n(request {i})",
        }
        for i in range(cases)
    ]
    for k in ("user_confirmed", "confirmation_timestamp", "confirmed_hash"):
        ts.pop(k, None)
    set_path = Path(tmp) / f"set-{uuid.uuid4().hex[:6]}.json"
    set_path.write_text(json.dumps(ts))
    Store(db).close()
    env = {**os.environ, "ABEQ_SCRIPTED_LATENCY": "0.05", "PYTHONPATH": str(ROOT)}
    t = time.perf_counter()
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "abeq",
                "run",
                "--original",
                str(EXAMPLE / "SKILL.md"),
                "--candidate",
                str(EXAMPLE / cand),
                "--transfer-set",
                str(set_path),
                "--db",
                db,
                "--runner-model",
                "scripted/rules",
                "--confirm",
                "--quiet",
                "--review",
                f"r{i}",
                "--concurrency",
                "4",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, cand in enumerate(("candidate-faithful.md", "candidate-lossy.md"))
    ]
    for p in procs:
        _, err = p.communicate(timeout=900)
        if p.returncode not in (0, 1):
            raise RuntimeError(err[-2000:])
    wall = time.perf_counter() - t
    store = Store(db)
    made = [store.log.made_calls_by_kind(r["id"]).get("runner-teacher", 0) for r in store.log.runs()]
    return {
        "cases": cases,
        "teacher_calls_per_run": made,
        "teacher_calls": sum(made),
        "wall_s": round(wall, 1),
        "met": sum(made) == cases,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--parts", default="review,overhead,teacher")
    p.add_argument("--cases", type=int, default=10_000)
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "team_store.json"))
    a = p.parse_args(argv)
    parts = a.parts.split(",")
    why = pg_server.unavailable()
    if why:
        print(f"cannot start PostgreSQL here: {why}", file=sys.stderr)
        return 2
    server = pg_server.start()
    result: dict = {
        "bench": "team_store",
        "cpus": os.cpu_count(),
        "load_1min_before": round(os.getloadavg()[0], 2),
    }
    try:
        with tempfile.TemporaryDirectory() as tmp:
            dbs = (
                lambda name: {  # noqa: E731
                    "sqlite": os.path.join(tmp, f"{name}.db"),
                    "postgresql": create_database(server.url(), f"{name}_{uuid.uuid4().hex[:8]}"),
                }
            )
            if "review" in parts:
                result["review"] = {b: review(db, a.cases) for b, db in dbs("review").items()}
                print(f"review: {result['review']}", file=sys.stderr, flush=True)
            if "teacher" in parts:
                result["teacher"] = {b: teacher(db, tmp) for b, db in dbs("teacher").items()}
                print(f"teacher: {result['teacher']}", file=sys.stderr, flush=True)
            if "overhead" in parts:
                result["overhead"] = overhead(server.url())
                print(
                    f"overhead: PostgreSQL/sqlite {result['overhead']['postgresql_over_sqlite']}",
                    file=sys.stderr,
                )
    finally:
        close_pools()
        server.stop()
    result["load_1min_after"] = round(os.getloadavg()[0], 2)
    Path(a.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items()}, indent=1)[:3000])
    print(f"-> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
