"""A database is data, not code (issue 33, item 2): the runner command a run stored runs again only
when the user gives it again or confirms it, and the desk shows the command, not a model name."""

from __future__ import annotations

import shlex
import sys

import pytest
from conftest import EXAMPLE

from abeq.api import prepare_run
from abeq.cli import main
from abeq.desk import runs, worker
from abeq.results.store.store import Store


def forged_db(tmp_path, marker) -> tuple[str, int, str]:
    """A database someone hands over: a cancelled command run whose command writes `marker`."""
    db = str(tmp_path / "handed-over.db")
    agent = shlex.join([sys.executable, "-c", f"open({str(marker)!r}, 'a').write('ran\\n'); print('done')"])
    store = Store(db)
    first = prepare_run(
        EXAMPLE / "SKILL.md",
        EXAMPLE / "candidate-lossy.md",
        EXAMPLE / "transfer-set.json",
        runner_model="scripted/rules",
        store=store,
        confirm=True,
        runner_cmd=agent,
        runner_env=("MY_DEPLOY_TOKEN",),
    )
    store.log.update_run(first.run_id, status="cancelled")
    store.close()
    return db, first.run_id, agent


def test_resume_shows_a_stored_command_and_runs_it_only_when_given_again_or_trusted(tmp_path, capsys):
    marker = tmp_path / "marker"
    db, run_id, agent = forged_db(tmp_path, marker)
    base = ["resume", str(run_id), "--db", db, "--quiet", "--out", str(tmp_path / "r.json")]
    assert main(base) == 2 and not marker.exists()
    err = capsys.readouterr().err
    assert agent in err and "MY_DEPLOY_TOKEN" in err and "--trust-stored-command" in err
    # another command, or the command without the environment it names: refused too
    assert main([*base, "--runner-cmd", "true", "--runner-env", "MY_DEPLOY_TOKEN"]) == 2
    assert main([*base, "--runner-cmd", agent]) == 2 and not marker.exists()
    assert main([*base, "--runner-cmd", agent, "--runner-env", "MY_DEPLOY_TOKEN"]) in (0, 1)
    assert marker.exists()


def test_trust_stored_command_runs_it(tmp_path):
    marker = tmp_path / "marker"
    db, run_id, _ = forged_db(tmp_path, marker)
    assert main(["resume", str(run_id), "--db", db, "--quiet", "--trust-stored-command"]) in (0, 1)
    assert marker.exists()


def test_the_desk_names_the_command_and_resumes_it_only_once_confirmed(tmp_path):
    marker = tmp_path / "marker"
    db, run_id, agent = forged_db(tmp_path, marker)
    store = Store(db)
    line = runs.settings_text(store.log.run(run_id))
    assert f"runner command: {agent}" in line and "MY_DEPLOY_TOKEN" in line
    assert "scripted/rules" not in line.split("·")[0]
    from abeq.desk.review_vm import run_label

    assert f"command {agent[:30]}" in run_label(store.log.run(run_id), "c.md")  # the Review page's picker
    [row] = runs.unfinished(store, store.log.run(run_id)["review_id"])
    assert row["command"] == agent
    with pytest.raises(Exception, match="stored command"):
        worker.resume(db, run_id)
    assert not marker.exists()
    worker.resume(db, run_id, trust_stored_command=True)
    assert worker.wait(run_id, 120) and marker.exists()
