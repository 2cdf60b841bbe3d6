"""Checks before a run and around it: check-set's counts and warnings, the set formats and the desk
editor keep them, the store holds them, and a run over the loopback HTTP server grades them."""

import json
import sqlite3
import urllib.request

import pytest
from conftest import EXAMPLE

from abeq import sets
from abeq.cli import main
from abeq.desk import editor
from abeq.errors import InputError
from abeq.models import scripted
from abeq.testing.loopback import LoopbackServer

RUBRIC = {"type": "llm-rubric", "value": "Strips internal ticket ids", "target": "transcript"}


def write_set(tmp_path, extra: dict[str, list]) -> str:
    ts = sets.load(EXAMPLE / "transfer-set.json")
    cases = [
        type(c).model_validate(
            {**c.model_dump(), "assertions": [*c.model_dump()["assertions"], *extra.get(c.id, [])]}
        )
        for c in ts.cases
    ]
    path = tmp_path / "set.json"
    path.write_text(sets.dump(ts.model_copy(update={"cases": cases})))
    return str(path)


def check_set(path, *extra):
    return main(["check-set", "--original", str(EXAMPLE / "SKILL.md"), "--transfer-set", path, *extra])


def test_check_set_counts_the_checks_and_names_the_skipped(tmp_path, capsys):
    path = write_set(tmp_path, {"adversarial-2": [{"type": "python", "value": "file://check.py"}, RUBRIC]})
    db = tmp_path / "none.db"
    assert check_set(path, "--db", str(db)) == 0
    out = capsys.readouterr().out
    assert "checks: 7 of 7 cases carry 8 (6 run in code, 1 graded by the judge model, 1 skipped)" in out
    assert "case adversarial-2: check python" in out and "is skipped" in out
    assert f"no database at {db}" in out and not db.exists()  # read, never created


def test_check_set_warns_about_a_check_the_original_fails(run_args, tmp_path, capsys):
    db = str(tmp_path / "abeq.db")
    plain = write_set(tmp_path, {})
    main(run_args(transfer_set=plain, db=db))
    capsys.readouterr()
    # a check added afterwards: the original's transcript of happy-1 is already in the database
    path = write_set(
        tmp_path, {"happy-1": [{"type": "contains", "value": "zebra crossing", "target": "transcript"}]}
    )
    assert check_set(path, "--db", db) == 0
    out = capsys.readouterr().out
    assert "tried on the original's stored transcripts of 6 case(s)" in out
    assert (
        'case happy-1: the original fails its own check contains "zebra crossing" on the transcript (run 1'
        in out
    )
    assert out.count("fails its own check") == 1  # the example's own checks pass on the original
    assert check_set(path, "--db", db, "--json") == 0
    fails = json.loads(capsys.readouterr().out)["checks"]["original_fails"]
    assert [(f["case_id"], f["run_id"]) for f in fails] == [("happy-1", 1)]


def test_check_set_refuses_a_check_that_cannot_be_evaluated(tmp_path, capsys):
    path = write_set(tmp_path, {"edge-2": [{"type": "regex", "value": "[unclosed"}]})
    assert check_set(path) == 2
    out = capsys.readouterr()
    assert "case edge-2, check 2 (regex)" in out.out and "cannot be evaluated" in out.err


def test_every_set_format_keeps_the_checks(tmp_path):
    ts = sets.load(write_set(tmp_path, {"happy-2": [RUBRIC]}))
    for fmt in ("json", "yaml", "jsonl", "csv"):
        p = tmp_path / f"back.{fmt}"
        p.write_text(sets.export_text(ts, fmt))
        back = sets.load(p)
        assert [c.assertions for c in back.cases] == [c.assertions for c in ts.cases], fmt
        assert sets.set_hash(back) == sets.set_hash(ts)


def test_expectations_are_part_of_a_cases_identity(example):
    first = example["ts"].cases[0]
    changed = first.model_copy(update={"expectations": ["asks to confirm the version"]})
    ts = example["ts"]
    assert sets.set_hash(ts.model_copy(update={"cases": [changed, *ts.cases[1:]]})) != sets.set_hash(ts)


def test_the_desk_table_edits_checks_as_json(example):
    ts = example["ts"]
    df = editor.to_frame(ts)
    assert json.loads(df.loc[0, "assertions"])[0]["type"] == "not-regex"
    df.loc[0, "assertions"] = json.dumps([{"type": "icontains", "value": "(#471)"}])
    df.loc[0, "expectations"] = '["Credits @mira-k"]'
    cases = editor.from_frame(df, ts)
    assert cases[0].assertions[0].value == "(#471)" and cases[0].expectations == ["Credits @mira-k"]
    assert editor.changed(ts, cases) and not sets.edit(ts, cases).user_confirmed
    df.loc[0, "assertions"] = "[{oops"
    with pytest.raises(InputError, match="row 1: assertions is not valid JSON"):
        editor.from_frame(df, ts)


def test_the_store_has_the_check_tables(tmp_path):
    from abeq.results.store.store import Store

    Store(str(tmp_path / "s.db")).close()
    conn = sqlite3.connect(tmp_path / "s.db")
    cols = {t: [r[1] for r in conn.execute(f"pragma table_info({t})")] for t in ("check_results", "gradings")}
    assert (
        cols["check_results"][:3] == ["run_id", "case_id", "idx"]
        and "teacher_evidence" in cols["check_results"]
    )
    assert "shown_as_a" in cols["gradings"] and "reply" in cols["gradings"]
    assert "checks_lost" in [r[1] for r in conn.execute("pragma table_info(run_cases)")]


def test_checks_over_the_loopback_http_server(run_args, tmp_path):
    path = write_set(tmp_path, {"happy-1": [RUBRIC], "edge-1": [RUBRIC]})
    with LoopbackServer() as srv:
        code = main(
            run_args(
                candidate="candidate-lossy.md",
                transfer_set=path,
                runner_model="openai/scripted",
                api_base=srv.url,
                out=tmp_path / "r.json",
                record=tmp_path / "rec.json",
            )
        )
        stats = json.loads(urllib.request.urlopen(srv.url.rsplit("/v1", 1)[0] + "/stats").read())
    assert code == 1 and stats["requests"] == 21 + 2  # two grading calls crossed HTTP too
    graded = [
        h for h in scripted.model("scripted").history if '<data name="run_a">' in h["messages"][-1]["content"]
    ]
    assert len(graded) == 2 and graded[0]["schema"]["title"] == "GradingReply"
    rec = json.loads((tmp_path / "rec.json").read_text())
    h1 = next(c for c in rec["cases"] if c["case_id"] == "happy-1")
    assert [c["outcome"] for c in h1["checks"]] == ["kept", "lost"]


def test_a_real_skill_creator_evals_file_brings_its_assertions_into_the_run(run_args, tmp_path):
    """skill-creator's `assertions` (tests/fixtures/real) arrive as checks and are graded on both arms."""
    from abeq.execution.checks.checks import case_checks

    src = (
        EXAMPLE.parents[2]
        / "tests"
        / "fixtures"
        / "real"
        / "skill-creator"
        / "longwind48__cachewipe__evals.json"
    )
    out = tmp_path / "set.json"
    assert (
        main(
            ["import-set", "--from", "skill-creator", str(src), "--out", str(out), "--default-type", "happy"]
        )
        == 0
    )
    ts = sets.load(out)
    assert [len(c.assertions) for c in ts.cases] == [6, 6, 5]
    assert {c.kind for case in ts.cases for c in case_checks(case)} == {"model"}
    doc = str(EXAMPLE / "SKILL.md")
    code = main(
        run_args(
            original=doc,
            candidate=doc,
            transfer_set=out,
            allow_thin=True,
            out=tmp_path / "r.json",
            record=tmp_path / "rec.json",
        )
    )
    rec = json.loads((tmp_path / "rec.json").read_text())
    assert code == 0 and [len(c["checks"]) for c in rec["cases"]] == [6, 6, 5]
    graded = [
        h for h in scripted.model("rules").history if '<data name="run_a">' in h["messages"][-1]["content"]
    ]
    assert len(graded) == 3  # one grading call per case, every assertion in it
    assert all(
        c["kind"] == "model" and c["teacher_evidence"] for case in rec["cases"] for c in case["checks"]
    )
