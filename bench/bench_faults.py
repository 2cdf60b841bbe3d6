"""Faults: 100 cases against a loopback server that answers 20% of requests 429/500 and 10% of
structured replies malformed, through `abeq run` as a user types it (default retries).

Reports how every case ended (judged / errored, with the reasons), whether any verdict differs
from a clean run of the same set (it must not: a fault is never a verdict), the requests the
faults cost, the exit code, and the wall time against a clean run of the same set.

Run: .venv/bin/python bench/bench_faults.py   Writes bench/results/faults.json.
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
import time
from collections import Counter
from contextlib import redirect_stderr
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from abeq.testing.process import LoopbackProcess  # noqa: E402
from abeq.testing.synthetic import example_run_args, write_set  # noqa: E402

CASES, FAIL, MALFORMED, LATENCY = 100, 0.2, 0.1, 0.02


def one_run(tmp: Path, name: str, ts: Path, **faults) -> dict:
    from abeq.cli import main as abeq

    out = tmp / f"{name}.json"
    with LoopbackProcess(latency=LATENCY, seed=7, **faults) as srv:
        t = time.perf_counter()
        with redirect_stderr(io.StringIO()):
            code = abeq(
                example_run_args(
                    ts,
                    tmp / f"{name}.db",
                    srv.url,
                    "candidate-lossy.md",
                    "--concurrency",
                    "16",
                    "--out",
                    str(out),
                )
            )
        wall = time.perf_counter() - t
        st = srv.stats()
    rep = json.loads(out.read_text())
    return {
        "exit_code": code,
        "wall_s": round(wall, 2),
        "requests": st["requests"],
        "server": st,
        "verdicts": {c["case_id"]: c["verdict"] for c in rep["cases"]},
        "errors": rep["errors"],
        "pass": rep["summary"]["pass"],
    }


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ts = write_set(tmp / "set.json", CASES)
        clean = one_run(tmp, "clean", ts)
        faulty = one_run(tmp, "faulty", ts, fail_rate=FAIL, malformed_rate=MALFORMED)
    changed = [cid for cid, v in faulty["verdicts"].items() if clean["verdicts"].get(cid) != v]
    accounted = set(faulty["verdicts"]) | {e["case_id"] for e in faulty["errors"]}
    reasons = Counter(e["error"].split(":", 2)[-1].strip()[:80] for e in faulty["errors"])
    ok = (
        not changed
        and accounted == set(clean["verdicts"])
        and clean["exit_code"] == 1
        and (faulty["exit_code"] == 3) == bool(faulty["errors"])
        and (not faulty["errors"] or faulty["pass"] is False)
    )
    out = {
        "bench": "faults",
        "cases": CASES,
        "fail_rate": FAIL,
        "malformed_rate": MALFORMED,
        "latency_s": LATENCY,
        "clean": {k: clean[k] for k in ("exit_code", "wall_s", "requests")},
        "faulty": {
            "exit_code": faulty["exit_code"],
            "wall_s": faulty["wall_s"],
            "requests": faulty["requests"],
            "judged": len(faulty["verdicts"]),
            "errored": len(faulty["errors"]),
            "injected_429": faulty["server"].get("fail_429"),
            "injected_500": faulty["server"].get("fail_500"),
            "injected_malformed": faulty["server"].get("malformed"),
            "error_reasons": dict(reasons),
        },
        "verdicts_changed_by_faults": changed,
        "every_case_accounted_for": accounted == set(clean["verdicts"]),
        "target_met": ok,
    }
    path = ROOT / "bench" / "results" / "faults.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    f = out["faulty"]
    print(f"clean: exit {clean['exit_code']}, {clean['requests']} requests, {clean['wall_s']} s")
    print(
        f"faulty: exit {f['exit_code']}, {f['judged']} judged + {f['errored']} errored of {CASES}, "
        f"{f['requests']} requests ({f['injected_429']} x 429, {f['injected_500']} x 500, "
        f"{f['injected_malformed']} malformed), {f['wall_s']} s; verdicts changed by faults: {len(changed)}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
