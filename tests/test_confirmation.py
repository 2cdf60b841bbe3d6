"""Confirmation is a hard gate a file cannot forge; a review keeps its original; thin means thin."""

import json
import sqlite3

import pytest
from conftest import EXAMPLE, with_cases

from abeq import sets
from abeq.cli import main
from abeq.errors import InputError, NotConfirmedError
from abeq.execution.engine import Engine
from abeq.execution.runners import observe as observe_mod


@pytest.fixture
def lossy_run(run_args, tmp_path):
    """`abeq run` of the lossy candidate on the set at `ts_path`; no --confirm unless `extra` has it."""
    return lambda ts_path, *extra: run_args(
        *extra, candidate="candidate-lossy.md", transfer_set=ts_path, confirm=False, out=tmp_path / "r.json"
    )


def runs_in(db):
    return sqlite3.connect(db).execute("select count(*) from runs").fetchone()[0] if db.exists() else 0


def write(path, ts):
    path.write_text(sets.dump(ts))
    return path


def test_a_set_confirmed_by_abeq_runs_without_confirm_again(lossy_run, tmp_path, example):
    path = write(tmp_path / "set.json", example["ts"])
    assert json.loads(path.read_text())["confirmed_hash"] == sets.set_hash(example["ts"])
    assert main(lossy_run(path)) == 1  # ran: the lossy candidate regresses


def test_a_confirmed_file_edited_by_hand_is_no_longer_confirmed(lossy_run, tmp_path, example, capsys):
    data = json.loads(sets.dump(example["ts"]))
    data["cases"][0]["input"] += " Also translate everything into French."
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data))
    assert main(lossy_run(path)) == 2
    err = capsys.readouterr().err
    assert "changed after it was confirmed" in err and "--confirm" in err and "set.json" in err
    assert runs_in(tmp_path / "abeq.db") == 0
    assert main(lossy_run(path, "--confirm")) == 1  # a person accepts it again: it runs


def test_confirmed_by_hand_is_not_confirmed(lossy_run, tmp_path, example, capsys):
    data = json.loads(sets.dump(example["ts"]))
    del data["confirmed_hash"]
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data))
    assert main(lossy_run(path)) == 2
    assert "no confirmation hash" in capsys.readouterr().err
    data["user_confirmed"] = "yes"  # not a boolean: refused as malformed, not read as true
    path.write_text(json.dumps(data))
    assert main(lossy_run(path, "--confirm")) == 2
    assert "user_confirmed" in capsys.readouterr().err
    assert runs_in(tmp_path / "abeq.db") == 0


def test_a_confirmed_set_with_its_original_blanked_is_not_confirmed(lossy_run, tmp_path, example, capsys):
    data = json.loads(sets.dump(example["ts"]))
    data["document_hash"] = ""
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data))
    assert main(lossy_run(path)) == 2
    assert "names no original" in capsys.readouterr().err


def test_a_set_confirmed_for_another_original_needs_confirming_again(lossy_run, tmp_path, example, capsys):
    other = sets.confirm(example["ts"], "0" * 64)
    path = write(tmp_path / "set.json", other)
    assert main(lossy_run(path)) == 2
    assert "confirmed for another original document, not this one" in capsys.readouterr().err
    assert main(lossy_run(path, "--confirm")) == 1


def test_the_engine_refuses_a_set_edited_after_confirmation(store, example, scripted_cfg):
    edited = example["ts"].model_copy(update={"cases": example["ts"].cases[:5]})  # no re-confirmation
    with pytest.raises(NotConfirmedError, match="changed after it was confirmed"):
        Engine(store, example["original"], example["lossy"], edited, scripted_cfg()).run()
    assert store.log.runs() == []


def test_sets_confirmed_in_an_older_database_stay_confirmed(store, example):
    legacy = example["ts"].model_copy(update={"confirmed_hash": None})
    h = store.inputs.put_transfer_set(legacy)
    assert sets.confirmation_problem(store.inputs.transfer_set(h), example["original"].hash) == ""


def test_a_review_keeps_its_original(run_args, lossy_run, tmp_path, example, capsys):
    agents = EXAMPLE.parent / "agents-md"
    assert main(lossy_run(EXAMPLE / "transfer-set.json", "--confirm", "--review", "R")) == 1
    doc = agents / "AGENTS.md"
    other = run_args("--review", "R", original=doc, candidate=doc, transfer_set=agents / "transfer-set.json")
    assert main(other) == 2
    err = capsys.readouterr().err
    assert (
        "review 'R' already has runs against a different original (SKILL.md)" in err and "new --review" in err
    )
    assert runs_in(tmp_path / "abeq.db") == 1
    con = sqlite3.connect(tmp_path / "abeq.db")
    assert con.execute(
        "select d.name from reviews r join documents d on d.hash = r.original_hash"
    ).fetchall() == [("SKILL.md",)]


def test_allow_thin_on_a_full_set_is_not_recorded_as_thin(store, example, scripted_cfg):
    full = Engine(
        store, example["original"], example["lossy"], example["ts"], scripted_cfg(allow_thin=True)
    ).run()
    assert store.log.run(full)["thin_accepted"] == 0
    thin = with_cases(example, example["ts"].cases[:2])
    small = Engine(store, example["original"], example["lossy"], thin, scripted_cfg(allow_thin=True)).run()
    assert store.log.run(small)["thin_accepted"] == 1


def test_the_aa_replay_is_a_sample_with_its_own_seed(store, example, scripted_cfg, monkeypatch):
    seen = []
    real = observe_mod.run_document

    async def spy(text, case, variant, spec, policy):
        seen.append((text == example["original"].text, spec.seed))
        return await real(text, case, variant, spec, policy)

    monkeypatch.setattr(observe_mod, "run_document", spy)
    Engine(store, example["original"], example["lossy"], example["ts"], scripted_cfg(aa=True)).run()
    teacher_seeds = sorted(seed for is_original, seed in seen if is_original)
    assert teacher_seeds == [0] * 7 + [1] * 7  # the cached teacher, and a replay that is another sample


def test_check_set_confirm_writes_the_confirmation_into_the_file(lossy_run, tmp_path, capsys):
    path = tmp_path / "set.json"
    path.write_text((EXAMPLE / "transfer-set.json").read_text())
    check = ["check-set", "--original", str(EXAMPLE / "SKILL.md"), "--transfer-set", str(path)]
    assert main(lossy_run(path)) == 2  # not confirmed yet
    assert main(check + ["--confirm"]) == 0
    data = json.loads(path.read_text())
    assert data["user_confirmed"] is True and data["confirmed_hash"] and data["confirmation_timestamp"]
    assert main(check) == 0 and "· confirmed" in capsys.readouterr().out
    assert main(lossy_run(path)) == 1  # runs without --confirm now
    csv_path = tmp_path / "set.csv"
    csv_path.write_text("id,type,input\nh1,happy,hello\n")
    assert (
        main(
            [
                "check-set",
                "--original",
                str(EXAMPLE / "SKILL.md"),
                "--transfer-set",
                str(csv_path),
                "--confirm",
            ]
        )
        == 2
    )  # thin: refused, and nothing written
    assert csv_path.read_text() == "id,type,input\nh1,happy,hello\n"


def test_a_review_keeps_its_transfer_set(store, example, scripted_cfg):
    Engine(store, example["original"], example["lossy"], example["ts"], scripted_cfg(review="R")).run()
    fewer = with_cases(example, example["ts"].cases[1:])
    with pytest.raises(InputError, match="already has runs against a different transfer set"):
        Engine(store, example["original"], example["faithful"], fewer, scripted_cfg(review="R")).run()
    # the same cases confirmed again are the same set: round 2 runs
    again = sets.confirm(example["ts"], example["original"].hash)
    Engine(store, example["original"], example["faithful"], again, scripted_cfg(review="R")).run()
    assert sorted(r["round"] for r in store.log.runs()) == [1, 2]


def test_the_desk_will_not_swap_the_cases_of_a_review_with_runs(store, example, scripted_cfg):
    from abeq.desk import session

    Engine(store, example["original"], example["lossy"], example["ts"], scripted_cfg(review="R")).run()
    review = store.inputs.review("R")
    with pytest.raises(InputError, match="already has runs against a different transfer set"):
        session.set_transfer_set(store, review, with_cases(example, example["ts"].cases[1:]))
    assert session.set_transfer_set(store, review, example["ts"]) == review["transfer_set_hash"]


def test_a_review_never_takes_another_reviews_candidate(store, example):
    from abeq.desk import session

    session.load_example(store)
    first = store.inputs.review("example")
    rid = store.inputs.upsert_review("other", first["original_hash"], None, "skill")
    other = store.inputs.review("other")
    assert (
        rid == other["id"] and session.current_candidate(store, other, {}) is None
    )  # nothing loaded into it
    session.set_candidate(store, other, {}, "OTHER-candidate.md", "Other text.\n")
    example_cand = session.current_candidate(store, store.inputs.review("example"), {})
    assert example_cand["name"] == "candidate-lossy.md"  # untouched by the other review's load
    assert session.current_candidate(store, store.inputs.review("other"), {})["name"] == "OTHER-candidate.md"


def test_the_desk_will_not_open_its_own_database_as_a_document(tmp_path, monkeypatch):
    from abeq.desk import session

    db = tmp_path / "desk.db"
    monkeypatch.setenv("ABEQ_DB", str(db))
    for p in (db, tmp_path / "desk.db-wal", tmp_path / "." / "desk.db-shm"):
        with pytest.raises(InputError, match="own database"):
            session.refuse_own_database(str(p))
    session.refuse_own_database(str(EXAMPLE / "SKILL.md"))  # any other file is fine


def test_a_one_run_confirm_is_the_runs_and_a_standing_one_names_its_author(
    lossy_run, tmp_path, monkeypatch, capsys
):
    """Failed before (issue 46): after `abeq run --confirm` the store kept the set confirmed (the
    desk said "Confirmed", and a review could start on it); nobody was named."""
    from abeq.results.store.store import Store

    for k, v in {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "user.name",
        "GIT_CONFIG_VALUE_0": "Ana",
    }.items():
        monkeypatch.setenv(k, v)
    path = write(tmp_path / "set.json", sets.load(EXAMPLE / "transfer-set.json"))  # not confirmed
    assert main(lossy_run(path, "--confirm")) == 1
    store = Store(str(tmp_path / "abeq.db"))
    (run,) = store.log.runs()
    assert run["set_confirmed_for_run"] == "Ana"
    stored = store.inputs.transfer_set(run["transfer_set_hash"])
    assert sets.confirmation_problem(stored) == "the transfer set is not confirmed"
    assert store.inputs.confirmation(run["transfer_set_hash"]) == {}
    assert main(lossy_run(path)) == 2  # and the next run without --confirm is refused
    check = ["check-set", "--original", str(EXAMPLE / "SKILL.md"), "--transfer-set", str(path), "--confirm"]
    assert main(check) == 0
    assert json.loads(path.read_text())["confirmed_by"] == "Ana"  # a standing one: the file says who
    assert main(lossy_run(path)) == 1
    assert store.inputs.confirmation(run["transfer_set_hash"])["confirmed_by"] == "Ana"
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "")
    assert sets.confirm(stored, "h", by=None).confirmed_by is None
    from abeq.sets.confirmation import confirmer

    assert confirmer() == "unknown" and confirmer("ana@example.org") == "ana@example.org"
