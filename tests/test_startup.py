"""Start-up: what `abeq --version`, `abeq --help` and a gate with nothing to gate load, each in a fresh
process. The store (sqlite_utils, which loads pandas, numpy and pyarrow when Streamlit installed them),
the model call path and the schemas load only when a command opens a store or calls a model
(bench/bench_startup.py and bench/bench_gate.py measure the time)."""

import json
import subprocess
import sys

import pytest
from conftest import ROOT
from gitrepo import GitRepo

# what no command that opens no store and calls no model needs
HEAVY = (
    "pandas",
    "numpy",
    "pyarrow",
    "sqlite_utils",
    "sqlite3",
    "litellm",
    "aiohttp",
    "asyncio",
    "streamlit",
    "yaml",
    "jsonschema",
    "urllib.request",
    "abeq.results.store.store",
    "abeq.models.call",
    "abeq.schemas",
    "abeq.sets.parse",
    "abeq.sets.imported",
    "abeq.execution.engine",
)
# what a gate with nothing to gate needs of the rest: abeq.toml's settings checked (RunSettings) and the
# documents' footprints read
WATCHED = (*HEAVY, "pydantic", "abeq.execution.settings", "abeq.documents")
PROBE = """
import json, os, sys
from abeq.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
watched = json.loads(os.environ["WATCHED"])
got = {"count": len(sys.modules), "loaded": [m for m in watched if m in sys.modules]}
print(json.dumps(got), file=sys.stderr)
"""


def loaded(*argv: str, cwd=None) -> dict:
    got = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=cwd,
        env={
            "PYTHONPATH": str(ROOT),
            "PATH": "/usr/bin:/bin",
            "HOME": str(cwd or ROOT),
            "WATCHED": json.dumps(WATCHED),
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    return json.loads(got.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_load_no_store_no_pydantic(flag):
    got = loaded(flag)
    assert got["loaded"] == [] and got["count"] < 250  # 154 modules today; 836 with the store


def test_a_gate_with_nothing_to_gate_opens_no_store(tmp_path):
    r = GitRepo(tmp_path / "repo")
    r.commit(
        "base",
        {
            "abeq.toml": '[defaults]\nrunner_model = "scripted/rules"\n\n[[document]]\npath = "CLAUDE.md"\n'
            'transfer_set = "evals/cases.json"\n',
            "CLAUDE.md": "# Project\n\n- Run the tests.\n",
            "evals/cases.json": '{"cases": []}\n',
            "README.md": "hello\n",
        },
    )
    r.git("checkout", "-q", "-b", "pr")
    r.commit("docs only", {"README.md": "hello again\n"})
    got = loaded("gate", "--base", "main", "--db", str(tmp_path / "gate.db"), cwd=r.root)
    # abeq.toml's settings are still checked (RunSettings, pydantic); nothing of a run is loaded
    assert got["loaded"] == ["pydantic", "abeq.execution.settings", "abeq.documents"]
    assert got["count"] < 400  # 291 modules today; 865 with the store
    assert not (tmp_path / "gate.db").exists()
