"""The desk's policy is the MCP server's (issue 44 item 4): once people sign in, a run started on the
desk uses only the runner commands, models, API bases and code trust that `abeq app` was started
with; the refusal is the library's (worker.start and the paths beside it), so a forged session state
meets it too; a run started on the desk records who started it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DESK_APP
from streamlit.testing.v1 import AppTest

from abeq.cli import main
from abeq.desk import identity, worker
from abeq.desk import transfer_set_vm as tsv
from abeq.errors import InputError
from abeq.execution.settings import RunSettings
from abeq.results.store.store import Store

BO = "bo@example.org"
POLICY_ENV = "ABEQ_DESK_POLICY"  # abeq.desk.policy's (named here, so the tests also run on a desk before it)
LISTED = "http://127.0.0.1:9/v1"


def team_store(db) -> str:
    """A review 'team' whose set runs code (a python assert) in the sqlite file `db`: its path."""
    from conftest import EXAMPLE

    from abeq import sets
    from abeq.documents import load_document

    data = json.loads((EXAMPLE / "transfer-set.json").read_text())
    data["cases"][0]["assertions"].append({"type": "python", "value": "return {'pass': True, 'score': 1}"})
    path = Path(db).with_name("code-set.json")
    path.write_text(json.dumps(data))
    store = Store(str(db))
    original, candidate = (load_document(EXAMPLE / n) for n in ("SKILL.md", "candidate-faithful.md"))
    oh = store.inputs.put_document(original.name, original.text)
    rid = store.inputs.upsert_review("team", oh, store.inputs.put_transfer_set(sets.load(path)), "skill")
    store.inputs.set_review_candidate(rid, store.inputs.put_document(candidate.name, candidate.text))
    store.close()
    return str(db)


@pytest.fixture
def team_env(monkeypatch, tmp_path):
    """What today's `abeq app --trusted-proxy 127.0.0.1` hands the desk (no policy of its own)."""
    monkeypatch.setenv(identity.PROXY_ENV, "127.0.0.1/32")
    monkeypatch.setenv(identity.HEADER_ENV, identity.DEFAULT_HEADER)
    monkeypatch.setenv(identity.PEER_ENV, "")
    monkeypatch.delenv(POLICY_ENV, raising=False)
    monkeypatch.setenv("ABEQ_TRUST_FILE", str(tmp_path / "trusted.json"))


@pytest.mark.parametrize(
    "given, says",
    [
        ({"runner_mode": "command", "runner_cmd": "touch {marker}"}, "--runner-cmd"),
        ({"api_base": "http://attacker.example/v1"}, "API base http://attacker.example/v1 is not allowed"),
        ({"runner_model": "openai/gpt-4o"}, "model openai/gpt-4o is not allowed"),
        ({"trust_code": True}, "does not let a signed-in reviewer run a set's code"),
        ({"unsandboxed": True}, "--unsandboxed: this desk does not grant it"),
    ],
)
def test_a_team_desk_refuses_at_start_what_its_operator_did_not_allow(
    team_env, example, tmp_path, given, says
):
    """worker.start, as the Run page's Start calls it, with settings no widget offers (a forged
    session state). Before, each started a run (the command ran as the desk's user)."""
    marker = tmp_path / "PWNED"
    settings = RunSettings(
        **{k: v.format(marker=marker) if isinstance(v, str) else v for k, v in given.items()}
    )
    db = str(tmp_path / "desk.db")
    with pytest.raises(InputError, match=says) as e:
        worker.start(db, example["original"], example["lossy"], example["ts"], settings)
    assert "abeq app" in e.value.render()  # the way out names who can allow it
    assert not marker.exists() and Store(db).log.runs() == []


def test_a_run_started_on_the_desk_records_who_started_it(monkeypatch, example, tmp_path, capsys):
    from abeq.desk import policy

    allowed = policy.Policy(policy.desk_bounds(["scripted/*"]), operator="ops")
    monkeypatch.setenv(POLICY_ENV, allowed.to_env())
    db = str(tmp_path / "desk.db")
    settings = RunSettings(runner_model="scripted/rules", judge_model="scripted/rules")
    run_id = worker.start(db, example["original"], example["faithful"], example["ts"], settings, who=BO)
    assert worker.wait(run_id, 120)
    assert json.loads(Store(db).log.run(run_id)["config"])["started_by"] == BO
    rec = tmp_path / "rec.json"
    assert main(["export", str(run_id), "--db", db, "--record", str(rec)]) == 0
    assert json.loads(rec.read_text())["run"]["started_by"] == BO


def test_trusting_a_sets_code_from_a_team_desk_is_refused(team_env, example, tmp_path):
    """The Transfer set page's Confirm with "Trust its code too" (to_confirm): the operator's trust
    file is left as it was."""
    o = example["original"]
    state = tsv.SetState(example["ts"], None, "not confirmed", False)
    with pytest.raises(InputError, match="run a set's code"):
        tsv.Edits(state, None, None).to_confirm({"content": o.text, "hash": o.hash}, False, True, BO, BO)
    assert not (tmp_path / "trusted.json").exists()


@pytest.fixture
def signed_in(db, monkeypatch, team_env):
    """The desk as a reviewer signed in through the trusted proxy sees it (the header itself is the
    browser test's: tests/e2e/test_e2e_policy.py)."""
    monkeypatch.setattr(identity, "resolve", lambda *a, **k: identity.Identity(BO, "proxy", True))
    team_store(db)
    at = AppTest.from_file(str(DESK_APP), default_timeout=60)
    at.run()
    at.switch_page("desk_pages/2_transfer_set.py").run()
    assert [c.key for c in at.checkbox if c.key == "confirm_trust_code"] == []  # the set's code: not offered
    at.button(key="confirm").click().run()
    return at


def test_a_signed_in_reviewer_is_offered_no_command_nor_api_base_and_a_forged_one_is_refused(signed_in, db):
    at = signed_in
    at.switch_page("desk_pages/3_run.py").run()
    assert not at.exception
    assert at.radio(key="runner_mode").options == [
        "chat: one runner-model call narrates",
        "tools: the model acts on a copy of the case's workspace",
    ]
    assert "api_base" not in [w.key for w in at.text_input]
    said = " ".join(i.value for i in at.info)
    assert "What runs on this desk may use" in said and "Runner commands (any agent CLI): not allowed" in said
    assert at.button(key="start").disabled  # the set's code is not trusted, and no box offers it
    # what no widget offers, put in the session's state as a forged client would
    at.session_state["trust_code"] = True
    at.run().button(key="start").click().run()
    assert any("does not let a signed-in reviewer run a set's code" in e.value for e in at.error)
    at.session_state["api_base"] = "http://attacker.example/v1"
    at.button(key="start").click().run()
    assert any("attacker.example/v1 is not allowed by this desk" in e.value for e in at.error)
    assert Store(db).log.runs() == []


def test_abeq_app_hands_its_bounds_to_the_desk(tmp_path, monkeypatch, capsys):
    from abeq.desk import policy

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    seen: list = []
    monkeypatch.setattr("os.execve", lambda exe, argv, env: seen.append(env))
    db = str(tmp_path / "a.db")
    assert main(["app", "--db", db]) == 0  # a desk of one's own: as before
    assert policy.current(env=seen[-1]) == policy.OPEN
    assert main(["app", "--db", db, "--trusted-proxy", "127.0.0.1"]) == 0
    team = policy.current(env=seen[-1])
    assert team.bounded and not team.allows_commands() and not team.allows_trust()
    assert team.api_bases() == () and team.bounds.allowed_models() == ("local/smollm2",)
    flags = [
        "--allow-commands",
        "--allow-api-base",
        LISTED,
        "--allow-model",
        "openai/*",
        "--allow-trust-code",
    ]
    assert main(["app", "--db", db, "--trusted-proxy", "127.0.0.1", *flags]) == 0
    team = policy.current(env=seen[-1])
    assert team.allows_commands() and team.allows_trust() and team.api_bases() == (LISTED,)
    assert team.bounds.allowed_models() == ("openai/*",) and team.operator
    assert "Runs started on the desk may use only: Models: openai/*" in capsys.readouterr().out


def test_what_the_operator_allowed_is_offered(monkeypatch, signed_in):
    """The same desk started with --allow-commands --allow-api-base URL --allow-trust-code: each is
    offered again, the API base as a list of the allowed servers."""
    from abeq.desk import policy

    given = policy.Policy(policy.desk_bounds(["scripted/*"], [LISTED], True), trust_code=True, operator="ops")
    monkeypatch.setenv(POLICY_ENV, given.to_env())
    at = signed_in
    at.switch_page("desk_pages/2_transfer_set.py").run()
    assert at.checkbox(key="confirm_trust_code").label.startswith("Trust its code too")
    at.switch_page("desk_pages/3_run.py").run()
    assert not at.exception
    assert "command: any agent CLI in that copy" in at.radio(key="runner_mode").options
    assert at.selectbox(key="api_base").options == ["(none: hosted APIs)", LISTED]
    assert at.checkbox(key="trust_code").label.startswith("Run the set's code")
    assert "as allowed by ops" in " ".join(i.value for i in at.info)


def test_resuming_a_stored_command_run_on_a_team_desk_is_refused(team_env, example, tmp_path):
    """A database may hold a run started anywhere with any command: Resume on the team desk refuses
    it by the desk's policy, even with the stored command confirmed."""
    from abeq.api import prepare_run

    db = str(tmp_path / "desk.db")
    marker = tmp_path / "PWNED"
    run = prepare_run(
        example["original"], example["lossy"], example["ts"], store=db, runner_cmd=f"touch {marker}"
    ).run_id
    with pytest.raises(InputError, match="--runner-cmd: this desk runs no command"):
        worker.resume(db, run, trust_stored_command=True, who=BO)
    assert not marker.exists()


def test_the_mutation_test_and_compare_keep_to_the_policy_too(signed_in, db, tmp_path):
    """The Transfer set page's mutation test takes the Run page's settings (a forged runner command
    there is refused before any mutant runs); Compare takes a judge model and an API base."""
    from abeq.desk import mutation_vm
    from abeq.desk.session import SIGNED_IN_KEY

    store = Store(db)
    review = store.inputs.review("team")
    original = store.inputs.document(review["original_hash"])
    ts = store.inputs.transfer_set(review["transfer_set_hash"])
    forged = {SIGNED_IN_KEY: BO, "runner_mode": "command", "runner_cmd": f"touch {tmp_path / 'PWNED'}"}
    with pytest.raises(InputError, match="--runner-cmd: this desk runs no command"):
        mutation_vm.prepare(store, original, ts, forged)
    at = signed_in
    at.switch_page("desk_pages/6_compare.py").run()
    at.text_input(key="compare_model").input("openai/gpt-4o").run()
    assert any("model openai/gpt-4o is not allowed by this desk" in e.value for e in at.error)
    assert not (tmp_path / "PWNED").exists()


def test_a_signed_in_reviewer_reads_no_path_outside_the_desks_project(signed_in, db, tmp_path):
    """Documents' "Path on this machine": the desk's user can read ~/.ssh or the desk's own secrets
    file; a signed-in reviewer reads only under the project the desk was started in (as `abeq mcp`)."""
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- not for reviewers")
    at = signed_in
    at.switch_page("desk_pages/1_documents.py").run()
    at.radio(key="candidate_mode").set_value("Path").run()
    at.text_input(key="candidate_path").input(str(secret)).run()
    at.button(key="candidate_load_path").click().run()
    assert any("is outside the project this desk reads" in e.value for e in at.error)
    shown = " ".join(str(e.proto) for e in at.main)
    stored = b"".join(p.read_bytes() for p in Path(db).parent.glob("desk.db*"))
    assert "not for reviewers" not in shown and b"not for reviewers" not in stored
