"""What running the base's cases beside the head's costs the gate (issue 45): calls made and wall time.

Since issue 45 `abeq gate` runs the base's transfer set, each case in its base form, plus the cases
the pull request adds; before, it ran the head's set alone. The extra cost is the base form of each
case the pull request removed or edited. Measured on the bundled release-notes skill (7 cases) in a
real git repository, on the scripted model answering each call after ABEQ_SCRIPTED_LATENCY (0.05 s,
as a hosted model would take some time), in-process:

- set unchanged: the pull request rewrites SKILL.md (the faithful candidate) and leaves the set;
- set edited: the same rewrite, and the set edited in the pull request (2 cases edited, 1 removed,
  1 added), confirmed for the head;

each as the gate runs it now (fresh store) and as the gate ran it before (`abeq run` over the head's
set: original git:BASE, candidate git:HEAD, fresh store); the edited one both ways again in a store
that had gated another pull request on the same base (the lossy candidate: the base's transcripts
cached, as in the Action's store). Calls are the figure; wall times follow the machine's load.

Run: .venv/bin/python bench/bench_gate_base_cases.py   Writes bench/results/gate_base_cases.json.
The checkout this file is in is measured (run from it, or with PYTHONPATH).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("ABEQ_SCRIPTED_LATENCY", "0.05")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from abeq.cli import main as abeq  # noqa: E402
from abeq.results.store.store import Store  # noqa: E402

RN = ROOT / "abeq" / "examples" / "release-notes"
SKILL, CASES = "skills/notes/SKILL.md", "skills/notes/evals/cases.json"
TOML = """[defaults]
runner_model = "scripted/rules"

[[document]]
path = "skills/*/SKILL.md"
transfer_set = "{dir}/evals/cases.json"
"""
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}
GIT_ENV.update(GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.invalid")


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(repo)}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


def confirm_set(repo: Path, cases: list[dict]) -> None:
    (repo / CASES).write_text(json.dumps({"cases": cases}, indent=2))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert abeq(["check-set", "--original", SKILL, "--transfer-set", CASES, "--confirm"]) == 0


def build(repo: Path) -> list[dict]:
    """main: the skill and its confirmed set; the base's cases."""
    (repo / CASES).parent.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / SKILL).write_text((RN / "SKILL.md").read_text())
    (repo / "abeq.toml").write_text(TOML)
    cases = json.loads((RN / "transfer-set.json").read_text())["cases"]
    confirm_set(repo, cases)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return cases


def branch(repo: Path, name: str, cases: list[dict] | None, candidate: str = "candidate-faithful.md") -> None:
    """A pull request off main: a rewrite of SKILL.md, and the set as given (None: unchanged)."""
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", name)
    (repo / SKILL).write_text((RN / candidate).read_text())
    if cases is not None:
        confirm_set(repo, cases)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", name)


def measured(argv: list[str], db: Path) -> dict:
    """One command's wall time and the calls its runs made, by kind, from its store."""
    t = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = abeq([*argv, "--db", str(db), "--quiet"])
    wall = time.perf_counter() - t
    store = Store(str(db))
    try:
        run = store.log.runs()[0]  # newest first
        made = store.log.made_calls_by_kind(run["id"])
        cases = store.log.case_counts(run["id"])["total"]
    finally:
        store.close()
    made_all = sum(made.values())
    return {"exit": code, "wall_s": round(wall, 2), "cases": cases, "calls_made": made, "made": made_all}


def main() -> int:
    out: dict = {"bench": "gate_base_cases", "latency_s": float(os.environ["ABEQ_SCRIPTED_LATENCY"])}
    with tempfile.TemporaryDirectory(prefix="abeq-bench-gate-base-") as tmp:
        repo, dbs = Path(tmp) / "repo", Path(tmp)
        repo.mkdir()
        os.chdir(repo)
        base = build(repo)
        edited = [dict(c) for c in base]
        for c in edited[:2]:
            c["input"] += "\nAlso: the release is a week late."
        added = {**edited[-1], "id": "composition-2", "input": edited[-1]["input"] + "\nOne more change."}
        edited = [*edited[:4], *edited[5:], added]  # adversarial-1 removed, composition-2 added
        branch(repo, "unchanged", None)
        branch(repo, "edited", edited)
        branch(repo, "other", None, "candidate-lossy.md")
        measured(["gate", "--base", "main"], dbs / "warm-up.db")  # imports and first calls, not measured
        load = os.getloadavg()[0]
        base_commit = git(repo, "rev-parse", "main").strip()
        for name in ("unchanged", "edited"):
            git(repo, "checkout", "-q", name)
            gate = ["gate", "--base", "main"]
            before = ["run", "--original", f"git:{base_commit}:{SKILL}", "--candidate", f"git:{name}:{SKILL}"]
            before += ["--transfer-set", f"git:{name}:{CASES}", "--runner-model", "scripted/rules"]
            before += ["--confirm"]
            out[name] = {
                "gate": measured(gate, dbs / f"{name}-gate.db"),
                "head_set_only": measured(before, dbs / f"{name}-before.db"),
            }
        # the Action's store: another pull request on the same base (another candidate) gated first
        for how, argv in (("gate_warm_store", gate), ("head_set_only_warm_store", before)):
            warm = dbs / f"{how}.db"
            git(repo, "checkout", "-q", "other")
            measured(["gate", "--base", "main"], warm)
            git(repo, "checkout", "-q", "edited")
            out["edited"][how] = measured(argv, warm)
    out["load_1min"] = round(load, 2)
    for name, rows in out.items():
        if isinstance(rows, dict) and "gate" in rows:
            for how, r in rows.items():
                print(
                    f"{name:9} {how:15} cases {r['cases']:2}  calls made {r['made']:3} {r['calls_made']}  "
                    f"{r['wall_s']:.2f} s  exit {r['exit']}"
                )
    print(f"(scripted model, {out['latency_s']} s per call; load {load:.2f})")
    path = ROOT / "bench" / "results" / "gate_base_cases.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
