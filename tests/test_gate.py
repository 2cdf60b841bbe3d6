"""abeq gate: a real git repository with a branch; base against head on the scripted model."""

import json
import re
import sys

import pytest
import zygote
from conftest import ROOT
from gitrepo import GitRepo

from abeq.cli import main
from abeq.documents import load_document
from abeq.models import scripted
from abeq.sets import confirm
from abeq.sets.parse import load as load_set

RN, AM = ROOT / "abeq" / "examples" / "release-notes", ROOT / "abeq" / "examples" / "agents-md"
TOML = """\
[defaults]
runner_model = "scripted/rules"

[[document]]
path = "CLAUDE.md"
transfer_set = "evals/claude-cases.json"

[[document]]
path = "skills/*/SKILL.md"
transfer_set = "{dir}/evals/cases.json"
"""


def confirmed(set_file, doc_path) -> str:
    """The set confirmed for the document (read from the repository's working tree)."""
    ts = confirm(load_set(set_file), load_document(doc_path).hash)
    return ts.model_dump_json(indent=2)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """main: CLAUDE.md importing docs/rules.md, a skill with references/, abeq.toml, confirmed sets."""
    r = GitRepo(tmp_path / "repo")
    monkeypatch.chdir(r.root)
    r.write(
        {
            "CLAUDE.md": "# Project\n\n@docs/rules.md\n",
            "docs/rules.md": (AM / "AGENTS.md").read_text(),
            "skills/release-notes/SKILL.md": (RN / "SKILL.md").read_text(),
            "skills/release-notes/references/style.md": "Plain words.\n",
            "abeq.toml": TOML,
            "README.md": "hello\n",
        }
    )
    r.write(
        {
            "evals/claude-cases.json": confirmed(AM / "transfer-set.json", r.root / "CLAUDE.md"),
            "skills/release-notes/evals/cases.json": confirmed(
                RN / "transfer-set.json", r.root / "skills/release-notes/SKILL.md"
            ),
        }
    )
    r.commit("base")
    r.git("checkout", "-q", "-b", "pr")
    return r


def gate(tmp_path, *extra):
    return main(["gate", "--base", "main", "--db", str(tmp_path / "gate.db"), "--quiet", *extra])


def test_nothing_changed_exits_0_with_one_line(repo, tmp_path, capsys):
    repo.commit("docs only", {"README.md": "hello again\n"})
    assert gate(tmp_path) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and "no configured document changed" in out[0]


def test_nothing_changed_imports_no_model_library(repo, tmp_path):
    import subprocess

    repo.commit("docs only", {"README.md": "hello again\n"})
    code = (
        "import sys; from abeq.cli import main; rc = main(['gate', '--base', 'main']); "
        "print(rc, 'litellm' in sys.modules, 'abeq.execution.engine' in sys.modules)"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    got = subprocess.run([sys.executable, "-c", code], cwd=repo.root, env=env, capture_output=True, text=True)
    assert got.stdout.strip().splitlines()[-1] == "0 False False", got.stderr


def test_a_lossy_skill_fails_naming_the_lost_rule(repo, tmp_path):
    repo.commit("shorter skill", {"skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text()})
    md, out = tmp_path / "gate.md", tmp_path / "gate.json"
    assert gate(tmp_path, "--markdown", str(md), "--out", str(out), "--junit", str(tmp_path / "j.xml")) == 1
    body = md.read_text()
    assert "**FAIL** skills/release-notes/SKILL.md" in body and "regressed" in body
    assert "Lost behaviour:" in body and "<details>" in body
    docs = json.loads(out.read_text())["documents"]
    assert [(d["path"], d["state"]) for d in docs] == [
        ("CLAUDE.md", "unchanged"),
        ("skills/release-notes/SKILL.md", "changed"),
    ]
    assert "testsuite" in (tmp_path / "j.xml").read_text()


def test_a_faithful_skill_passes_and_a_rerun_calls_nothing(repo, tmp_path):
    repo.commit(
        "same skill, new words", {"skills/release-notes/SKILL.md": (RN / "candidate-faithful.md").read_text()}
    )
    assert gate(tmp_path) == 0
    scripted.forget()
    assert gate(tmp_path) == 0
    assert scripted.model("rules").history == []  # every call came from the store


def test_an_import_only_change_is_gated(repo, tmp_path):
    rules = (AM / "AGENTS.md").read_text()
    kept = "\n".join(line for line in rules.splitlines() if "Decimal" not in line)
    repo.commit("drop a rule from the import", {"docs/rules.md": kept + "\n"})
    out = tmp_path / "gate.json"
    gate(tmp_path, "--out", str(out))
    doc = json.loads(out.read_text())["documents"][0]
    assert doc["path"] == "CLAUDE.md" and doc["state"] == "changed"
    assert doc["changed_files"] == ["docs/rules.md"] and doc["report"]["cases"]


def test_a_second_pr_on_the_same_base_makes_no_teacher_call(repo, tmp_path):
    repo.commit("faithful", {"skills/release-notes/SKILL.md": (RN / "candidate-faithful.md").read_text()})
    gate(tmp_path)
    repo.git("checkout", "-q", "main")
    repo.git("checkout", "-q", "-b", "pr2")
    repo.commit("lossy", {"skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text()})
    out = tmp_path / "two.json"
    assert gate(tmp_path, "--out", str(out)) == 1
    from abeq.results.store.store import open_store

    run_id = json.loads(out.read_text())["documents"][1]["run_id"]
    assert open_store(str(tmp_path / "gate.db")).log.call_stats(run_id)["teacher_made"] == 0


def test_a_new_document_is_reported_not_gated(repo, tmp_path):
    repo.commit("new skill", {"skills/other/SKILL.md": "# Other\n\n- Do a thing.\n"})
    out = tmp_path / "gate.json"
    assert gate(tmp_path, "--out", str(out)) == 0
    states = {d["path"]: d["state"] for d in json.loads(out.read_text())["documents"]}
    assert states["skills/other/SKILL.md"] == "new"


def test_an_unconfirmed_changed_set_is_refused_saying_who_confirms(repo, tmp_path, capsys):
    cases = json.loads((repo.root / "skills/release-notes/evals/cases.json").read_text())
    cases["cases"][0]["input"] += " And one more thing."
    repo.commit(
        "edit a case and the skill",
        {
            "skills/release-notes/evals/cases.json": json.dumps(cases),
            "skills/release-notes/SKILL.md": (RN / "candidate-faithful.md").read_text(),
        },
    )
    scripted.forget()
    assert gate(tmp_path) == 2
    err = capsys.readouterr().err
    assert "this pull request changed it" in err and "abeq check-set" in err and "--confirm" in err
    assert scripted.model("rules").history == []


def test_an_unknown_base_exits_2_naming_it(repo, tmp_path, capsys):
    assert main(["gate", "--base", "no-such-branch", "--db", str(tmp_path / "g.db")]) == 2
    assert "unknown revision 'no-such-branch'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "toml, said",
    [
        ("[[document]]\npath = 'CLAUDE.md'\n", "line 1: [[document]] 1 needs 'transfer_set'"),
        (TOML + "judge_samples = 12\n", "line 11: 'judge_samples': Input should be less than or equal to 9"),
        (TOML + "trust_code = true\n", "line 11: 'trust_code' is not a setting here"),
        (
            "[defaults]\nrunner_modle = 'x'\n[[document]]\npath='a'\ntransfer_set='b'\n",
            "line 2: 'runner_modle': not a setting",
        ),
        ("[[document]\n", "not valid TOML"),
    ],
)
def test_a_malformed_project_file_names_the_key_and_line(repo, tmp_path, capsys, toml, said):
    repo.git("checkout", "-q", "main")
    repo.commit("config", {"abeq.toml": toml})
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "-q", "main")
    assert gate(tmp_path) == 2
    assert said in capsys.readouterr().err


def test_init_writes_a_project_file_for_the_documents_found(tmp_path, monkeypatch, capsys):
    r = GitRepo(tmp_path / "fresh")
    monkeypatch.chdir(r.root)
    r.commit(
        "a", {"AGENTS.md": "- x\n", "skills/a/SKILL.md": "- y\n", "src/x.py": "", "docs/notes.md": "- z\n"}
    )
    r.write({".cursor/rules/style.mdc": "- Use tabs.\n"})  # not committed yet: found too
    assert main(["gate", "--init"]) == 0
    text = (r.root / "abeq.toml").read_text()
    paths = [line.split('"')[1] for line in text.splitlines() if line.startswith("path = ")]
    assert paths == [".cursor/rules/style.mdc", "AGENTS.md", "skills/a/SKILL.md"]
    assert main(["gate", "--init"]) == 2  # never over an existing one


def test_a_change_in_a_skills_references_counts_and_its_evals_do_not(repo, tmp_path):
    cases = json.loads((repo.root / "skills/release-notes/evals/cases.json").read_text())
    repo.commit("set metadata only", {"skills/release-notes/evals/cases.json": json.dumps(cases, indent=1)})
    out = tmp_path / "a.json"
    assert gate(tmp_path, "--out", str(out)) == 0
    assert all(d["state"] == "unchanged" for d in json.loads(out.read_text())["documents"])
    repo.commit("reference", {"skills/release-notes/references/style.md": "Short words.\n"})
    assert gate(tmp_path, "--out", str(out)) == 2  # a chat runner never sees it: not judged (issue 45)
    doc = json.loads(out.read_text())["documents"][1]
    assert doc["state"] == "changed" and doc["changed_files"] == ["skills/release-notes/references/style.md"]
    assert doc["not_judged"].startswith("references/style.md changed, a chat runner sees SKILL.md alone")


def test_check_sets_refuses_an_uncovered_section_where_required(repo, capsys):
    text = (
        (repo.root / "abeq.toml")
        .read_text()
        .replace(
            'transfer_set = "{dir}/evals/cases.json"',
            'transfer_set = "{dir}/evals/cases.json"\nrequire_coverage = true',
        )
    )
    repo.write({"abeq.toml": text})
    skill = repo.root / "skills/release-notes/SKILL.md"
    skill.write_text(skill.read_text() + "\n## Brand new section\n\n- Do the new thing.\n")
    assert main(["gate", "--check-sets", str(skill)]) == 2
    assert "exercises" in capsys.readouterr().err
    assert main(["gate", "--check-sets", str(repo.root / "README.md")]) == 0  # no document touched


def _override_all(db, out) -> None:
    doc = json.loads(out.read_text())["documents"][1]
    for c in doc["report"]["cases"]:
        if c["verdict"] != "equivalent":
            argv = ["override", str(doc["run_id"]), c["case_id"], "--verdict", "equivalent"]
            assert main([*argv, "--reason", "terser, same steps", "--reviewer", "ana", "--db", str(db)]) == 0


def test_a_reviewers_override_is_honoured_by_the_next_gate_run(repo, tmp_path):
    repo.commit("lossy", {"skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text()})
    out, md = tmp_path / "gate.json", tmp_path / "gate.md"
    assert gate(tmp_path, "--out", str(out)) == 1
    _override_all(tmp_path / "gate.db", out)
    scripted.forget()
    assert gate(tmp_path, "--markdown", str(md)) == 0
    assert scripted.model("rules").history == []
    assert "overridden by ana: terser, same steps" in md.read_text()


def test_exported_decisions_kept_in_the_repository_spare_a_fresh_store_the_calls(repo, tmp_path):
    repo.commit("lossy", {"skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text()})
    out = tmp_path / "gate.json"
    assert gate(tmp_path, "--out", str(out)) == 1
    _override_all(tmp_path / "gate.db", out)
    decisions = tmp_path / "abeq-decisions.json"
    assert main(["export", "--overrides", str(decisions), "--db", str(tmp_path / "gate.db")]) == 0
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    # written in the pull request itself, the decisions do not count: its author could write them
    repo.commit(
        "decide my own cases",
        {
            "abeq-decisions.json": decisions.read_text(),
            "abeq.toml": 'overrides = "abeq-decisions.json"\n' + TOML,
        },
    )
    scripted.forget()
    assert gate(fresh) == 1
    held = json.loads(decisions.read_text())["decisions"]
    assert main(["export", "--overrides", str(decisions), "--db", str(fresh / "gate.db")]) == 0
    assert json.loads(decisions.read_text())["decisions"] == held  # export adds to the file it finds
    # kept on the branch the pull request merges into, they do (abeq.toml too is read there)
    repo.git("checkout", "-q", "main")
    repo.commit(
        "keep the reviewers' decisions",
        {
            "abeq-decisions.json": decisions.read_text(),
            "abeq.toml": 'overrides = "abeq-decisions.json"\n' + TOML,
        },
    )
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "-q", "main")
    (fresh / "gate.db").unlink()
    scripted.forget()
    md = tmp_path / "fresh.md"
    assert gate(fresh, "--markdown", str(md)) == 0  # a store that never saw the review
    assert scripted.model("rules").history == []
    assert "overridden by ana: terser, same steps" in md.read_text()


def test_the_headline_gives_the_aa_noise_floor_when_measured(repo, tmp_path):
    repo.git("checkout", "-q", "main")
    repo.commit("measure the noise", {"abeq.toml": TOML.replace("[defaults]\n", "[defaults]\naa = true\n")})
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "-q", "main")
    repo.commit("faithful", {"skills/release-notes/SKILL.md": (RN / "candidate-faithful.md").read_text()})
    md = tmp_path / "gate.md"
    gate(tmp_path, "--markdown", str(md))
    line = next(x for x in md.read_text().splitlines() if "skills/release-notes/SKILL.md" in x)
    assert "A/A noise floor" in line and "tokens saved" in line and "size ratio" in line


def test_the_pre_commit_hook_runs_its_entry_on_the_staged_files(repo):
    import shlex

    import yaml

    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    argv = shlex.split(hook["entry"])
    assert argv[0] == "abeq"
    skill = "skills/release-notes/SKILL.md"
    assert re.search(hook["files"], skill) and re.search(hook["files"], "CLAUDE.md")
    assert main([*argv[1:], skill]) == 0  # the set covers the skill as committed


def test_two_changed_documents_make_one_result_and_each_run_names_its_revisions(repo, tmp_path):
    rules = (AM / "AGENTS.md").read_text()
    repo.commit(
        "both",
        {
            "docs/rules.md": rules.replace("## Tests", "## Testing"),
            "skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text(),
        },
    )
    out, junit = tmp_path / "gate.json", tmp_path / "gate.xml"
    assert gate(tmp_path, "--out", str(out), "--junit", str(junit)) == 1  # one document regressed
    docs = json.loads(out.read_text())["documents"]
    assert [d["state"] for d in docs] == ["changed", "changed"]
    import xml.etree.ElementTree as ET

    suites = ET.parse(junit).getroot().findall("testsuite")
    assert [s.get("name").split(":")[0] for s in suites] == ["CLAUDE.md", "skills/release-notes/SKILL.md"]
    record = tmp_path / "record.json"
    run_id = str(docs[0]["run_id"])
    assert main(["export", run_id, "--record", str(record), "--db", str(tmp_path / "gate.db")]) == 0
    base, head = repo.git("rev-parse", "main"), repo.git("rev-parse", "HEAD")
    assert json.loads(record.read_text())["run"]["sources"] == {
        "original": f"git:{base}:CLAUDE.md",
        "candidate": f"git:{head}:CLAUDE.md",
        "transfer_set": f"git:{head}:evals/claude-cases.json",
    }


def test_runner_samples_in_the_project_file_reach_the_run(repo, tmp_path):
    """abeq.toml's defaults are RunSettings: runner_samples there runs each arm N times (issue 37)."""
    import sqlite3

    toml = TOML.replace(
        'runner_model = "scripted/rules"', 'runner_model = "scripted/rules"\nrunner_samples = 4'
    )
    repo.git("checkout", "-q", "main")  # the gate reads the base's project file
    repo.commit("sample each arm 4 times", {"abeq.toml": toml})
    repo.git("checkout", "-q", "-B", "pr")
    repo.commit("shorter skill", {"skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text()})
    assert gate(tmp_path) == 1  # the lost rules, 4/4 against 0/4, are beyond chance
    with sqlite3.connect(tmp_path / "gate.db") as c:
        (config,) = c.execute("select config from runs").fetchone()
        assert json.loads(config)["settings"]["runner_samples"] == 4
        assert c.execute("select count(*) from run_cases where samples is not null").fetchone()[0] == 7


def _two_documents_changed(repo) -> None:
    rules = (AM / "AGENTS.md").read_text()
    repo.commit(
        "both",
        {
            "docs/rules.md": rules.replace("## Tests", "## Testing"),
            "skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text(),
        },
    )


def _summaries(out) -> list:
    return [
        (d["path"], d["report"]["summary"], d["exit_code"]) for d in json.loads(out.read_text())["documents"]
    ]


def test_a_sharded_gate_reports_whole_from_the_share_that_lands_last(repo, tmp_path, capsys):
    """`abeq gate --shard k/n`: each share runs every n-th case of each changed document into that
    document's one run; a share landing while another is out exits 0 and writes nothing; the last
    writes every output, whole (the same as an unsharded gate's), and exits with the gate's code."""
    from abeq.results.store.store import Store

    _two_documents_changed(repo)
    first, last = tmp_path / "first.json", tmp_path / "last.json"
    assert gate(tmp_path, "--shard", "1/2", "--out", str(first), "--markdown", str(tmp_path / "f.md")) == 0
    assert "shard 1/2 stored its share" in capsys.readouterr().err
    assert not first.exists() and not (tmp_path / "f.md").exists()
    assert gate(tmp_path, "--shard", "2/2", "--out", str(last)) == 1  # one document regressed
    store = Store(str(tmp_path / "gate.db"))
    runs = store.log.runs()
    assert len(runs) == 2 and {r["status"] for r in runs} == {"finished"}
    for r in runs:  # each case run once, by one share or the other
        made, total = store.log.made_calls_by_kind(r["id"]), store.log.case_counts(r["id"])["total"]
        assert made["runner-teacher"] == made["runner-candidate"] == total
    whole = tmp_path / "whole.json"
    assert (
        main(["gate", "--base", "main", "--db", str(tmp_path / "one.db"), "--quiet", "--out", str(whole)])
        == 1
    )
    assert _summaries(last) == _summaries(whole)


@pytest.mark.multiprocess
def test_gate_shards_at_once_on_one_store_make_one_run_per_document(repo, tmp_path, store_db):
    """Two `abeq gate --shard k/2` processes at once on a shared store (sqlite file, PostgreSQL): one
    run per document, each case run once, and whoever lands last writes the whole result."""
    import os
    import subprocess

    from abeq.results.store.store import Store

    _two_documents_changed(repo)
    Store(store_db).close()  # migrated before the race
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ABEQ_SCRIPTED_LATENCY": "0.02"}
    outs = [tmp_path / f"shard{k}.json" for k in (1, 2)]
    procs = [
        zygote.popen(
            [sys.executable, "-m", "abeq", "gate", "--base", "main", "--db", store_db, "--quiet"]
            + ["--shard", f"{k}/2", "--out", str(o)],
            cwd=repo.root,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k, o in zip((1, 2), outs)
    ]
    codes = [p.wait(timeout=300) for p in procs]
    errs = [p.stderr.read() for p in procs]
    written = [o for o in outs if o.exists()]
    assert len(written) == 1 and codes.count(1) == 1, (codes, errs)
    assert codes.count(0) == 2 - len(written) and all(
        "stored its share" in e for e, c in zip(errs, codes) if c == 0
    )
    store = Store(store_db)
    runs = store.log.runs()
    assert len(runs) == 2 and {r["status"] for r in runs} == {"finished"}
    for r in runs:
        assert (
            store.log.made_calls_by_kind(r["id"])["runner-candidate"]
            == store.log.case_counts(r["id"])["total"]
        )
    whole = tmp_path / "whole.json"
    assert (
        main(["gate", "--base", "main", "--db", str(tmp_path / "one.db"), "--quiet", "--out", str(whole)])
        == 1
    )
    assert all(_summaries(w) == _summaries(whole) for w in written)


def test_two_shards_finishing_together_write_the_outputs_once(repo, tmp_path, monkeypatch):
    """Shard 1 stores its share; before it looks whether every run is finished, shard 2 lands and
    finishes them: both find the runs finished, and exactly one (the first to claim it in the store)
    writes the outputs and exits with the gate's code."""
    import abeq.gate.run as gate_run

    real, outs, inner = gate_run.run_all, [tmp_path / "s1.json", tmp_path / "s2.json"], []

    def run_all(planned, **kw):
        got = real(planned, **kw)
        if not inner:  # shard 1's share is stored: shard 2 runs and lands now
            inner.append(None)
            inner[0] = gate(tmp_path, "--shard", "2/2", "--out", str(outs[1]))
        return got

    monkeypatch.setattr(gate_run, "run_all", run_all)
    _two_documents_changed(repo)
    first = gate(tmp_path, "--shard", "1/2", "--out", str(outs[0]))
    assert sorted([first, *inner]) == [0, 1]  # one reports the regression, the other its share
    assert [o.exists() for o in outs] == [first == 1, inner[0] == 1]


def test_a_gated_documents_runs_are_a_review_named_after_its_path(repo, tmp_path, capsys):
    """`abeq history PATH` (and the desk's Review and History) open the gate's runs; the comment
    names each run, its models and the commands that open the store. When the base's document moves
    on, PATH holds the runs against the new base and the earlier ones keep a review of their own."""
    skill, db = "skills/release-notes/SKILL.md", str(tmp_path / "gate.db")
    repo.commit("lossy", {skill: (RN / "candidate-lossy.md").read_text()})
    out, md = tmp_path / "gate.json", tmp_path / "gate.md"
    assert gate(tmp_path, "--out", str(out), "--markdown", str(md)) == 1
    first = json.loads(out.read_text())["documents"][1]["run_id"]
    body = md.read_text()
    assert f"run {first} · runner scripted/rules · judge " in body
    assert f"abeq history {skill} --db {db}" in body and f"abeq override {first} happy-1 " in body
    capsys.readouterr()
    assert main(["history", skill, "--db", db]) == 0
    assert re.search(rf"(?m)^\s*{first}\b", capsys.readouterr().out)
    repo.git("checkout", "-q", "main")
    repo.commit("the base's own rewrite", {skill: (RN / "candidate-faithful.md").read_text()})
    repo.git("checkout", "-q", "-b", "pr2")
    repo.commit("lossy again", {skill: (RN / "candidate-lossy.md").read_text() + "\nOne more line.\n"})
    assert gate(tmp_path, "--out", str(out)) == 1
    second = json.loads(out.read_text())["documents"][1]["run_id"]
    from abeq.results.store.store import Store

    store = Store(db)
    now = store.inputs.review(skill)
    assert now is not None and [r["id"] for r in store.log.runs(now["id"])] == [second]
    kept = [r for r in store.inputs.reviews() if r["name"].startswith(skill + " @ ")]
    assert [[x["id"] for x in store.log.runs(r["id"])] for r in kept] == [[first]]
    from abeq.desk.session import bootstrap, current_review

    assert bootstrap(store) is None  # the desk opens the gate's reviews (before: it loaded its example)
    assert current_review(store, {})["name"] == skill


def test_check_sets_refuses_an_unconfirmed_or_edited_set(repo, capsys):
    """The pre-commit hook: a set edited after its confirmation (or never confirmed) is what the gate
    refuses in CI, so the commit is refused here already, naming the set and the command."""
    path = repo.root / "skills/release-notes/evals/cases.json"
    cases = json.loads(path.read_text())
    cases["cases"][0]["input"] += " And one more thing."
    path.write_text(json.dumps(cases))
    assert main(["gate", "--check-sets", str(path)]) == 2
    err = capsys.readouterr().err
    assert "skills/release-notes/evals/cases.json" in err and "changed after it was confirmed" in err
    assert "abeq check-set" in err and "--confirm" in err
    cases["user_confirmed"] = False
    path.write_text(json.dumps(cases))
    assert main(["gate", "--check-sets", str(path)]) == 2
    assert "not confirmed" in capsys.readouterr().err


def test_init_writes_model_lines_a_gate_can_run_with(tmp_path, monkeypatch):
    """--init's abeq.toml names models a plain `pip install abeq` can call (the Action installs no
    extra), not the embedded model's, which needs abeq[local]."""
    from abeq.gate.project import parse

    r = GitRepo(tmp_path / "fresh")
    monkeypatch.chdir(r.root)
    r.commit("a", {"AGENTS.md": "- x\n"})
    assert main(["gate", "--init"]) == 0
    project = parse((r.root / "abeq.toml").read_text(), "abeq.toml")
    models = {k: getattr(project.entries[0].settings, k) for k in ("runner_model", "judge_model")}
    assert all(m and not m.startswith("local/") for m in models.values()), models


def test_a_shallow_clone_says_fetch_depth(repo, tmp_path, capsys, monkeypatch):
    """actions/checkout fetches one commit by default: the gate cannot find the merge base, and says
    which setting fixes it rather than blaming the repository."""
    import subprocess

    repo.commit("lossy", {"skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text()})
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--no-single-branch", f"file://{repo.root}", str(shallow)],
        check=True,
        capture_output=True,
    )
    monkeypatch.chdir(shallow)
    assert main(["gate", "--base", "origin/main", "--db", str(tmp_path / "g.db")]) == 2
    err = capsys.readouterr().err
    assert "fetch-depth: 0" in err and "shallow" in err


def test_one_gated_document_checks_its_settings_once(repo, tmp_path, monkeypatch):
    """abeq.toml's settings are checked once for a document, not once per key and again per step."""
    from abeq.execution.settings import RunSettings

    class Counting:  # every RunSettings built or validated goes through its validator
        def __init__(self, real):
            self.real, self.n = real, 0

        def validate_python(self, *args, **kwargs):
            self.n += 1
            return self.real.validate_python(*args, **kwargs)

        def __getattr__(self, name):
            return getattr(self.real, name)

    toml = TOML.replace('runner_model = "scripted/rules"', 'runner_model = "scripted/rules"\naa = false')
    repo.git("checkout", "-q", "main")  # the gate reads the base's project file
    repo.commit("settings", {"abeq.toml": toml + "judge_samples = 1\nconcurrency = 2\n"})
    repo.git("checkout", "-q", "-B", "pr")
    repo.commit("shorter skill", {"skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text()})
    counting = Counting(RunSettings.__pydantic_validator__)
    monkeypatch.setattr(RunSettings, "__pydantic_validator__", counting)
    assert gate(tmp_path) == 1
    assert counting.n == 2  # one for each [[document]] of abeq.toml, none again for the changed one's run


def test_every_grant_the_gate_takes_reaches_the_documents_settings():
    """`abeq gate --trust-code --unsandboxed --check-env NAME`: the person's grants, each honoured."""
    from abeq.cli import build_parser
    from abeq.cli.gate import settings_for
    from abeq.gate.project import Entry

    args = build_parser().parse_args(["gate", "--trust-code", "--unsandboxed", "--check-env", "TOKEN"])
    got = settings_for(args)(Entry("CLAUDE.md", "cases.json").settings)
    assert (got.trust_code, got.unsandboxed, got.check_env) == (True, True, ("TOKEN",))
