"""`abeq mutate` end to end on the real embedded model (SmolLM2-135M): the bundled example, through
the command line, kept cheap with --max-mutants. The model is tiny, so which mutants it kills means
little; what is checked is that every mutant ends killed, survived or incomplete with its evidence,
the score is killed / mutants, the exit code says so, and a repeat makes no model call."""

import json
import sqlite3

import pytest
from conftest import EXAMPLE

from abeq.cli import main

pytestmark = pytest.mark.slow


def test_embedded_model_mutates_the_bundled_example(tmp_path):
    out, db = tmp_path / "m.json", str(tmp_path / "abeq.db")
    cases = str(EXAMPLE / "transfer-set.json")
    args = ["mutate", "--original", str(EXAMPLE / "SKILL.md"), "--transfer-set", cases,
            "--runner-model", "local/smollm2", "--db", db, "--confirm", "--concurrency", "1",
            "--max-mutants", "2", "--max-tokens", "600", "--out", str(out), "--quiet"]  # fmt: skip
    code = main(args)
    rep = json.loads(out.read_text())
    assert [m["section"] for m in rep["mutants"]] == ["Preamble", "Gathering the input"]
    assert code == (3 if rep["incomplete"] else 0)
    assert rep["score"] == round(rep["killed"] / rep["count"], 4) and rep["count"] == 2
    for m in rep["mutants"]:
        assert m["status"] in ("killed", "survived", "incomplete")
        assert (m["status"] == "killed") == bool(m["killed_by"])
        assert m["evidence"] or m["status"] == "incomplete"
    assert rep["mutants"][0]["claimed_by"] == ["happy-1"]
    assert rep["calls"]["made"] > 0 and rep["calls"]["teacher_made"] <= 7
    if not rep["incomplete"]:
        calls = sqlite3.connect(db).execute("select count(*) from calls").fetchone()
        assert main(args) == 0 and json.loads(out.read_text())["score"] == rep["score"]
        assert sqlite3.connect(db).execute("select count(*) from calls").fetchone() == calls  # read back
