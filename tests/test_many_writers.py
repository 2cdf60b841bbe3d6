"""Many writers on one store (sqlite file or PostgreSQL), each its own process: runs that need the
same teacher transcripts at once pay for each once; a writer killed mid-run leaves a store that
reads consistently and a run that resumes; four runs and two desks at once lose nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zygote
from conftest import EXAMPLE, ROOT, run_argv

from abeq.results.store.store import Store
from abeq.testing.synthetic import synthetic_run

CASES = 24  # two runs at once over the same cases, four at a time each: the claims race on every one
CASES_EACH = 7  # four runs and two desks at once: each run's set (the fewest cases a run accepts)


def _big_set(tmp_path, n: int = CASES) -> str:
    """The example's set with `n` cases (its seven, repeated with their inputs made distinct)."""
    ts = json.loads((EXAMPLE / "transfer-set.json").read_text())
    base = ts["cases"]
    cases = []
    for i in range(n):
        c = dict(base[i % len(base)])
        c["id"] = f"{c['id']}-{i:02d}"
        c["input"] = f"{c['input']}\n(request {i})"
        cases.append(c)
    ts["cases"] = cases
    for k in ("user_confirmed", "confirmation_timestamp", "confirmed_hash"):
        ts.pop(k, None)
    path = tmp_path / "big-set.json"
    path.write_text(json.dumps(ts))
    return str(path)


def _abeq(argv: list[str], latency: float = 0.02) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ABEQ_SCRIPTED_LATENCY": str(latency)}
    return zygote.popen(
        [sys.executable, "-m", "abeq", *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.multiprocess
def test_two_runs_at_once_pay_for_each_teacher_transcript_once(store_db, tmp_path):
    """Two processes run one original over the same 24 cases at the same time (two candidates): the
    teacher is called 24 times in all, not 48; without claims each run calls it for every case."""
    Store(store_db).close()  # migrated before the race (each process would also do it, once)
    ts = _big_set(tmp_path)
    procs = [
        _abeq(run_argv(db=store_db, transfer_set=ts, candidate=cand, review=f"r{i}", concurrency=4))
        for i, cand in enumerate(("candidate-faithful.md", "candidate-lossy.md"))
    ]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode in (0, 1), err[-2000:]
    store = Store(store_db)
    runs = store.log.runs()
    assert len(runs) == 2 and {r["status"] for r in runs} == {"finished"}
    made = [store.log.made_calls_by_kind(r["id"]).get("runner-teacher", 0) for r in runs]
    assert sum(made) == CASES, made
    for r in runs:  # each run still has every case judged, with the same teacher transcripts
        assert store.log.case_counts(r["id"])["judged"] == CASES
    a, b = ({c["case_id"]: c["teacher_key"] for c in store.log.run_cases(r["id"])} for r in runs)
    assert a == b
    assert store.sql.all("select * from claims") == []  # every claim ended


@pytest.mark.multiprocess
def test_a_writer_killed_mid_run_leaves_a_consistent_store_and_the_run_resumes(store_db, tmp_path):
    Store(store_db).close()
    ts = _big_set(tmp_path, 20)
    argv = run_argv(db=store_db, transfer_set=ts, concurrency=2)
    p = _abeq(argv, latency=0.05)
    store = Store(store_db)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # some cases judged, not all
        runs = store.log.runs()
        if runs and store.log.case_counts(runs[0]["id"])["judged"] >= 5:
            break
        time.sleep(0.1)
    p.send_signal(signal.SIGKILL)
    p.wait()
    [run] = store.log.runs()
    counts = store.log.case_counts(run["id"])
    assert 5 <= counts["judged"] < 20 and counts["total"] == 20
    # consistent: every judged case's transcripts and judgements are stored, every stored result was logged
    for c in store.log.run_cases(run["id"]):
        if c["status"] == "judged":
            assert store.cache.runner_result(c["teacher_key"]) and store.cache.runner_result(
                c["candidate_key"]
            )
    logged = {r["key"] for r in store.sql.all("select key from calls where cached = 0 and ok = 1")}
    stored = {r["key"] for r in store.sql.all("select key from runner_results")}
    assert stored <= logged
    # the dead writer's claims do not hold anyone up: the resumed run finishes
    done = _abeq(argv)
    out, err = done.communicate(timeout=600)
    assert done.returncode in (0, 1), err[-2000:]
    [again] = store.log.runs()
    assert again["id"] == run["id"] and again["status"] == "finished"
    assert store.log.case_counts(run["id"])["judged"] == 20
    assert store.sql.all("select * from claims") == []


def _processes():
    """Fresh processes for the reviewers: forked from one server process that imported this module
    (and with it the store) once, not each started from nothing as "spawn" does (~1.7 s of CPU each);
    never forked from this multi-threaded test process."""
    import multiprocessing

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def _save_at_once(db: str, run_id: int, reviewer: str, go_at: float) -> str:
    """One reviewer's process: saves an override of a case it read with no action in effect."""
    from abeq.errors import ReviewConflict

    store = Store(db)
    while time.time() < go_at:
        time.sleep(0.005)
    try:
        store.ledger.add_override(
            run_id,
            "case-0002",
            "equivalent",
            f"checked by {reviewer}",
            reviewer,
            "candidate-regressed",
            check_seen=True,
            seen_id=None,
        )
        return "saved"
    except ReviewConflict as e:
        return f"conflict:{e.current['reviewer']}"


def test_reviewers_saving_one_case_at_once_in_six_processes_lose_nothing(store_db):
    """Six processes (two desks and four CLIs' worth) save over the same case at the same moment,
    each having seen no action: exactly one is saved, the five others are told whose is in effect."""

    from abeq.testing.synthetic import synthetic_run

    run_id = synthetic_run(Store(store_db), 4, review="r", error_every=0)
    go_at = time.time() + 3
    with _processes().Pool(6) as pool:
        said = pool.starmap(_save_at_once, [(store_db, run_id, f"rev{i}", go_at) for i in range(6)])
    history = Store(store_db).ledger.override_history(run_id, "case-0002")
    assert said.count("saved") == 1 and len(history) == 1
    assert all(s == f"conflict:{history[0]['reviewer']}" for s in said if s != "saved")


@pytest.mark.multiprocess
def test_a_run_split_in_four_shards_is_whole_when_the_last_share_lands(store_db, tmp_path):
    """Four `abeq run --shard k/4` processes at once on one store make one run (not four: each joins it
    in one exclusive transaction): each runs its share (no case twice), the shares that land first
    exit 0 and write no report, the last one writes the whole report, the same as one unsharded run's."""
    Store(store_db).close()
    ts = _big_set(tmp_path, 20)
    outs = [tmp_path / f"shard{k}.json" for k in range(1, 5)]
    procs = [
        _abeq(run_argv(db=store_db, transfer_set=ts, candidate="candidate-lossy.md", shard=f"{k}/4", out=o))
        for k, o in zip(range(1, 5), outs)
    ]
    codes = []
    for p in procs:
        _, err = p.communicate(timeout=600)
        codes.append(p.returncode)
        assert p.returncode in (0, 1), err[-2000:]
    store = Store(store_db)
    [run] = store.log.runs()
    assert run["status"] == "finished" and store.log.case_counts(run["id"])["judged"] == 20
    calls = store.log.made_calls_by_kind(run["id"])
    assert calls["runner-teacher"] == 20 and calls["runner-candidate"] == 20  # no case run twice
    written = [json.loads(o.read_text()) for o in outs if o.exists()]
    # the last share (or two landing at the same moment) writes the whole report and exits with the gate
    assert len(written) >= 1 and codes.count(1) == len(written) and codes.count(0) == 4 - len(written)
    whole = tmp_path / "whole.json"
    single = str(tmp_path / "single.db")  # the unsharded run: in this process (the race is above)
    from abeq.cli import main

    main(run_argv(db=single, transfer_set=ts, candidate="candidate-lossy.md", out=whole))
    assert all(w["summary"] == json.loads(whole.read_text())["summary"] for w in written)


def test_shard_must_be_k_of_n(capsys, tmp_path):
    from abeq.cli import main

    for bad in ("0/4", "5/4", "2", "a/b"):
        with pytest.raises(SystemExit):
            main(run_argv(db=tmp_path / "x.db", shard=bad))
        assert "is not K/N" in capsys.readouterr().err


def test_a_claim_is_taken_over_only_from_a_run_that_died():
    """The claim's holder on this host is alive while its process is, however long since it beat
    (its first call may block on an import); elsewhere, its heartbeat must be recent."""
    import subprocess as sp

    from abeq.results.store.liveness import holds_claim, owner_id

    old = "2026-01-01T00:00:00Z"
    gone = sp.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    here_dead = f"{owner_id().rpartition(':')[0]}:{gone.pid}"
    assert holds_claim({"status": "running", "owner": owner_id(), "heartbeat_at": old})
    assert not holds_claim({"status": "running", "owner": here_dead, "heartbeat_at": old})
    assert not holds_claim({"status": "running", "owner": "elsewhere:1", "heartbeat_at": old})
    assert not holds_claim({"status": "finished", "owner": owner_id(), "heartbeat_at": old})


def _desk_saves(db: str, run_id: int, reviewer: str, verdict: str, ready: str) -> dict:
    """One desk session in its own process (the Review page through AppTest): opens the case, fills
    in an override, and saves it when the other desk has the case open too (each leaves a file in
    the folder `ready`); told another reviewer saved first, it replaces theirs with its own, knowingly."""
    os.environ["ABEQ_DB"] = db
    from conftest import DESK_APP
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(DESK_APP), default_timeout=60)
    at.query_params.update(review="desks", run=str(run_id), case="case-0001", reviewer=reviewer)
    at.run()
    at.switch_page("desk_pages/4_review.py").run()
    at.selectbox(key="ov_verdict").select(verdict)
    at.text_area(key="ov_reason").input(f"{reviewer} read both transcripts")
    (Path(ready) / reviewer).touch()
    deadline = time.monotonic() + 120
    while len(list(Path(ready).iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
    at.button(key="ov_submit").click().run()
    warned = [w.value.replace("\\", "") for w in at.warning if "replace?" in w.value]
    if warned:
        at.button(key="conflict_replace").click().run()
    return {"reviewer": reviewer, "warned": warned, "exception": [str(e.value) for e in at.exception]}


@pytest.mark.multiprocess
def test_four_runs_and_two_desks_on_one_store_at_once(store_db, tmp_path):
    """Issue 40's claim, measured in separate processes: four `abeq run` processes (four distinct
    runs) and two desk sessions write to one store at once. Every run gets its own id; both desks'
    overrides of the same case are kept, the second told of the first and replacing it knowingly;
    the run killed with SIGKILL mid-way resumes to the end under its own id."""

    from abeq.testing.synthetic import synthetic_run

    store = Store(store_db)
    desk_run = synthetic_run(store, 4, review="desks", error_every=0)  # case-0001: diverged
    faithful, ts = (EXAMPLE / "candidate-faithful.md").read_text(), _big_set(tmp_path, CASES_EACH)
    argv = []
    for i in range(4):  # four candidates: four distinct runs
        path = tmp_path / f"candidate-{i}.md"
        path.write_text(faithful + f"\n<!-- candidate {i} -->\n")
        argv.append(
            run_argv(db=store_db, transfer_set=ts, candidate=str(path), review=f"r{i}", concurrency=1)
        )
    ctx = _processes()
    ready = tmp_path / "desks-ready"
    ready.mkdir()
    with ctx.Pool(2) as pool:
        desks = pool.starmap_async(
            _desk_saves,
            [
                (store_db, desk_run, "ana", "equivalent", str(ready)),
                (store_db, desk_run, "bo", "candidate-regressed", str(ready)),
            ],
        )
        runs = [_abeq(a, latency=0.2 if i == 3 else 0.02) for i, a in enumerate(argv)]  # r3: slow, killed
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # r3 killed once it has judged a case, not all
            review = store.inputs.review("r3")
            mine = store.log.runs(review["id"]) if review else []
            if mine and store.log.case_counts(mine[0]["id"])["judged"] >= 1:
                break
            assert runs[3].poll() is None, runs[3].communicate()[1][-2000:]
            time.sleep(0.05)
        runs[3].send_signal(signal.SIGKILL)
        runs[3].wait()
        killed = store.log.runs(store.inputs.review("r3")["id"])[0]
        assert store.log.case_counts(killed["id"])["judged"] < CASES_EACH
        runs[3] = _abeq(argv[3])  # the same command resumes it, while the others may still write
        said = desks.get(timeout=120)
    for p in runs:
        _, err = p.communicate(timeout=300)
        assert p.returncode in (0, 1), err[-2000:]
    assert all(not d["exception"] for d in said), said
    ids = [r["id"] for r in store.log.runs()]
    assert len(ids) == len(set(ids)) == 5  # the desks' run and four runs, none sharing an id
    for i in range(4):
        [run] = store.log.runs(store.inputs.review(f"r{i}")["id"])
        assert run["status"] == "finished" and store.log.case_counts(run["id"])["judged"] == CASES_EACH
    assert store.log.runs(store.inputs.review("r3")["id"])[0]["id"] == killed["id"]  # resumed, not new
    trail = store.ledger.override_history(desk_run, "case-0001")
    assert len(trail) == 2 and {t["reviewer"] for t in trail} == {"ana", "bo"}  # no override lost
    first, second = trail
    assert second["seen_id"] == first["id"] and second["seen_verdict"] == first["verdict"]
    [warned] = [d for d in said if d["warned"]]  # the one who saved second was asked first
    assert warned["reviewer"] == second["reviewer"]
    asked = f"{first['reviewer']} overrode this just now to {first['verdict']}: replace?"
    assert asked in warned["warned"][0]
    assert store.sql.all("select * from claims") == []


def test_a_run_ends_the_claims_its_dead_processes_left(store_db):
    """A process killed between claiming a key and releasing it (say, just after finding that another
    run had stored the key's result) leaves a claim nobody takes over: the run's end removes it, its
    own and any other dead process's of this host, and leaves a live process's and another host's.
    (test_four_runs_and_two_desks_on_one_store_at_once found one left behind, once, on PostgreSQL.)"""
    from abeq.results.store.liveness import owner_id

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    host = owner_id().rpartition(":")[0]
    store = Store(store_db)
    run_id = synthetic_run(store, 1, review="claims", error_every=0)
    other = synthetic_run(store, 1, review="others", error_every=0)
    held = {"mine": owner_id(), "dead": f"{host}:{gone.pid}", "elsewhere": "elsewhere:1"}
    for key, owner in held.items():
        assert store.cache.claim(key, run_id, owner)
    assert store.cache.claim("other-run-dead", other, f"{host}:{gone.pid}")
    store.cache.end_claims(run_id, owner_id())
    left = {(r["key"], r["run_id"]) for r in store.sql.all("select key, run_id from claims")}
    assert left == {("elsewhere", run_id), ("other-run-dead", other)}
