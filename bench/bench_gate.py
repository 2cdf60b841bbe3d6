"""`abeq gate` on a pull request that changed no configured document: wall time, CPU seconds and
modules loaded of the whole command in a fresh process (median of 5; target <= 1 s wall on a quiet
machine: say the load), on a 2,000-commit repository.

The repository (made with `git fast-import` in a temporary folder): a CLAUDE.md importing
docs/rules.md, a skill with references/, their confirmed-looking sets, an abeq.toml naming both,
and 300 source files; then 2,000 commits on a branch, each changing one source file. The gate reads
the base's abeq.toml, compares the documents' footprints at the merge base and the head, finds no
change and exits 0 with one line.

Run: .venv/bin/python bench/bench_gate.py   Writes bench/results/gate.json.
The checkout this file is in is measured (PYTHONPATH), whatever abeq is installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_startup import env, measure

ROOT = Path(__file__).resolve().parents[1]
COMMITS = 2_000
SOURCES = 300
RUNS = 5
TARGET_S = 1.0
TOML = """[defaults]
runner_model = "scripted/rules"

[[document]]
path = "CLAUDE.md"
transfer_set = "evals/claude.json"

[[document]]
path = "skills/*/SKILL.md"
transfer_set = "{dir}/evals/cases.json"
"""


def _blob(data: str) -> str:
    """fast-import's `data` command: the byte count, then the bytes."""
    return f"data {len(data.encode())}\n{data}\n"


def build(folder: Path) -> None:
    """The repository: one base commit on main, COMMITS more on the branch `pr`."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(folder)}
    subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True, env=env)
    files = {
        "CLAUDE.md": "# Project\n\n@docs/rules.md\n",
        "docs/rules.md": "- Run the tests before you finish.\n- Keep changes small.\n",
        "skills/notes/SKILL.md": "# Notes\n\n- Read references/style.md first.\n",
        "skills/notes/references/style.md": "Plain words.\n",
        "skills/notes/evals/cases.json": '{"cases": []}\n',
        "evals/claude.json": '{"cases": []}\n',
        "abeq.toml": TOML,
        **{f"src/module_{i}.py": f"VALUE = {i}\n" for i in range(SOURCES)},
    }
    who = "bench <bench@example.invalid> 1700000000 +0000"
    stream = []
    mark = 1
    stream.append(f"commit refs/heads/main\nmark :{mark}\ncommitter {who}\n{_blob('base')}")
    for path, text in files.items():
        stream.append(f"M 100644 inline {path}\n{_blob(text)}")
    for n in range(COMMITS):
        mark += 1
        i = n % SOURCES
        stream.append(
            f"commit refs/heads/pr\nmark :{mark}\ncommitter {who}\n{_blob(f'change {n}')}"
            + ("from :1\n" if n == 0 else "")
            + f"M 100644 inline src/module_{i}.py\n{_blob(f'VALUE = {i}  # edit {n}')}"
        )
    subprocess.run(
        ["git", "fast-import", "--quiet"], input="".join(stream).encode(), cwd=folder, check=True, env=env
    )
    subprocess.run(["git", "checkout", "-q", "pr"], cwd=folder, check=True, env=env)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="abeq-bench-gate-") as tmp:
        repo = Path(tmp) / "repo"
        t = time.perf_counter()
        build(repo)
        built = time.perf_counter() - t
        count = subprocess.run(["git", "rev-list", "--count", "pr"], cwd=repo, capture_output=True, text=True)
        args = ["gate", "--base", "main", "--db", str(Path(tmp) / "gate.db")]
        first = subprocess.run(
            [sys.executable, "-m", "abeq", *args], cwd=repo, env=env(), capture_output=True, text=True
        )
        assert first.returncode == 0 and "no configured document changed" in first.stdout, first.stderr
        load = os.getloadavg()[0]
        m = measure(args, repo)
    med = m["median_wall_s"]
    met = med <= TARGET_S
    print(
        f"`abeq gate`, nothing relevant changed, {int(count.stdout)} commits: median {med:.3f} s wall, "
        f"{m['median_cpu_s']:.3f} s CPU over {RUNS} runs (walls {m['runs_wall_s']}); {m['modules']} modules; "
        f"target <= {TARGET_S} s: {'met' if met else 'MISSED'} (load {load:.2f}; repository built in "
        f"{built:.1f} s)"
    )
    out = {
        "bench": "gate",
        "commits": int(count.stdout),
        "files": SOURCES + 7,
        "output": first.stdout.strip(),
        "load_1min": round(load, 2),
        "runs_s": m["runs_wall_s"],
        "runs_cpu_s": m["runs_cpu_s"],
        "median_s": med,
        "median_cpu_s": m["median_cpu_s"],
        "modules": m["modules"],
        "target_s": TARGET_S,
        "target_met": met,
    }
    path = ROOT / "bench" / "results" / "gate.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
