"""`abeq mutate`: each section deleted in turn, run against the original's cached runs; a mutant is
killed when a case notices the loss. The document here is one whose sections' behaviour is known: the
scripted runner follows a section's rule only when the case asks for that section by name."""

import json
import re

import pytest

from abeq import sets
from abeq.cli import main
from abeq.documents import Document, load_document
from abeq.models import scripted
from abeq.models.scripted import rules as scripted_rules
from abeq.mutation.mutants import section_mutants, section_spans
from abeq.mutation.run import prepare_mutation
from abeq.schemas import Assertion, Case, TransferSet
from abeq.vocab import REGRESSED

DOC = """---
name: chores
description: household chores
---

Always be polite to whoever asks.

## Alpha
- Write the alpha report with totals.

## Beta
- Send the beta summary to the team.

## Gamma
- Archive the gamma logs nightly.

## Delta
- Delete the delta cache weekly.

## Epsilon
- Water the epsilon plants daily.
"""
# which sections each case makes the model use (its input names them), and which it claims
USES = {"c1": ["alpha"], "c2": ["beta"], "c3": ["alpha", "beta"], "c4": ["delta"], "c5": []}
CLAIMS = {"c1": ["Alpha"], "c2": ["Beta", "Gamma"], "c3": [], "c4": [], "c5": ["Preamble"]}
TYPES = {"c1": "happy", "c2": "happy", "c3": "edge", "c4": "adversarial", "c5": "composition"}


def uses_named_sections(model, messages, schema):
    """The runner follows only the rules of the sections its case names ("use alpha beta")."""
    user = "\n".join(str(m.get("content") or "") for m in messages if m["role"] == "user")
    blocks = scripted_rules.read_data_blocks(user)
    if "document" not in blocks or "case_input" not in blocks:
        return None
    wanted = set(re.findall(r"\b(alpha|beta|gamma|delta|epsilon)\b", blocks["case_input"]))
    kept = [
        ln for ln in blocks["document"].splitlines() if not ln.startswith("- ") or set(ln.split()) & wanted
    ]
    return json.dumps(scripted_rules.run_rules({**blocks, "document": "\n".join(kept)}))


@pytest.fixture
def known(tmp_path):
    return known_set(tmp_path)


def known_set(tmp_path):
    """The chores document, its confirmed set (in tmp_path) and the runner that uses named sections."""
    scripted.model("rules").handler = uses_named_sections
    doc = Document("chores.md", DOC)
    cases = [
        Case(id=i, type=TYPES[i], input=f"Please use {' '.join(USES[i]) or 'nothing'} today.",
             exercises_sections=CLAIMS[i], status="confirmed")
        for i in USES
    ]  # fmt: skip
    ts = sets.confirm(TransferSet(cases=cases), doc.hash)
    path = tmp_path / "chores.md"
    path.write_text(DOC)
    (tmp_path / "set.json").write_text(ts.model_dump_json())
    return doc, ts, tmp_path


def prepared(doc, ts, tmp_path, **kw):
    return prepare_mutation(
        doc, ts, runner_model="scripted/rules", store=str(tmp_path / "abeq.db"), concurrency=1, **kw
    )


def by_section(rep):
    return {m["section"]: m for m in rep.report["mutants"]}


def test_mutants_delete_each_section_by_its_exact_span_preamble_included_front_matter_kept():
    doc = Document("chores.md", DOC)
    ms = section_mutants(doc)
    assert [m.section for m in ms] == ["Preamble", "Alpha", "Beta", "Gamma", "Delta", "Epsilon"]
    for m in ms:
        assert m.document.text == DOC[: m.start] + DOC[m.end :]
        assert m.document.text.startswith("---\nname: chores")  # metadata is never a mutant
    assert ms[0].removed == "Always be polite to whoever asks.\n\n"
    assert ms[2].removed == "## Beta\n- Send the beta summary to the team.\n\n"
    assert ms[-1].removed == "## Epsilon\n- Water the epsilon plants daily.\n"


def test_an_instruction_files_imports_are_mutated_as_the_sections_they_hold(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "style.md").write_text("# Style\n- Use tabs.\n\n# Tests\n- Run pytest.\n")
    (tmp_path / "CLAUDE.md").write_text("# Project\n- Be brief.\n\n@style.md\n")
    doc = load_document(tmp_path / "CLAUDE.md")
    ms = {m.section: m for m in section_mutants(doc)}
    assert set(ms) == {"Project", "Style", "Tests"}
    assert ms["Style"].file == "style.md" and ms["Project"].file == ""
    # its heading and body, nothing of the next section (an import's headings may be nested deeper)
    assert re.fullmatch(r"#+ Style\n- Use tabs\.\n\n", ms["Style"].removed)
    for m in ms.values():  # the markers around an imported file are never deleted
        assert m.document.text.count("<!-- abeq:") == doc.text.count("<!-- abeq:")


def test_a_document_without_headings_has_its_paragraphs_for_mutants():
    text = "First rule: be kind.\n\nSecond rule: be brief.\n"
    assert [(a, b) for _, a, b in section_spans(text)] == [(0, 22), (22, len(text))]


def test_each_section_is_killed_or_survives_as_its_behaviour_says(known):
    doc, ts, tmp = known
    rep = prepared(doc, ts, tmp).run()
    got = by_section(rep)
    users = {s: {c for c, u in USES.items() if s.lower() in u} for s in got}
    for s, m in got.items():
        # killed exactly when some case uses the section, and only by cases that use it
        assert (m["status"] == "killed") == bool(users[s]), s
        assert set(m["killed_by"]) <= users[s]
        # claimed_by is exactly the cases that name the section
        assert m["claimed_by"] == [c for c, names in CLAIMS.items() if s in names]
    assert got["Alpha"]["killed_by"] == ["c1"]  # the claiming case is tried first
    assert got["Delta"]["killed_by"] == ["c4"] and got["Delta"]["claimed_by"] == []
    assert (
        got["Gamma"]["reading"] == "claimed but unnoticed"
        and got["Preamble"]["reading"] == "claimed but unnoticed"
    )
    assert got["Epsilon"]["reading"] == "blind"
    assert "behaviour_delta" not in got["Alpha"] and "beta summary" in got["Beta"]["evidence"][0]["delta"]
    pair = got["Gamma"]["evidence"][0]  # what stayed alike, side by side
    # the two transcripts are identical: said so, and the one transcript is kept once
    assert (
        pair["case_id"] == "c2"
        and pair["identical"]
        and pair["mutant"] == ""
        and "beta summary" in pair["teacher"]
    )
    assert rep.score == rep.report["killed"] / rep.report["count"] == 3 / 6


def test_all_cases_draws_the_full_map(known):
    doc, ts, tmp = known
    got = by_section(prepared(doc, ts, tmp, all_cases=True).run())
    assert set(got["Alpha"]["killed_by"]) == {"c1", "c3"} and set(got["Beta"]["killed_by"]) == {"c2", "c3"}
    assert all(m["cases_run"] == 5 for m in got.values())


def test_cached_teacher_one_case_per_kill_and_a_repeat_makes_no_call(known):
    from abeq.api import run

    doc, ts, tmp = known
    db = str(tmp / "abeq.db")
    run(doc, section_mutants(doc)[-1].document, ts, runner_model="scripted/rules", store=db, allow_thin=True)
    prep = prepared(doc, ts, tmp)
    est = prep.estimate()
    assert est["teacher_calls"] == 0 and est["teacher_cached"] == 5
    rep = prep.run()
    assert rep.report["calls"]["teacher_made"] == 0  # the original's run is cached
    for m in rep.report["mutants"]:
        stats = prep.store.log.call_stats(m["run_id"])
        if m["status"] == "killed" and m["claimed_by"]:
            assert m["cases_run"] == 1 and stats["made"] == 2  # one case: the mutant's run and its judgement
        elif m["status"] == "killed":  # Delta: no case claims it, so the cases run in the set's order
            assert m["section"] == "Delta" and m["cases_run"] == 4 and stats["made"] == 8
    before = len(scripted.model("rules").history)
    again = prepared(doc, ts, tmp)
    assert again.estimate()["expected_calls"] == 0
    assert again.run().report == {**rep.report}
    assert len(scripted.model("rules").history) == before  # a second identical mutate makes no model call


def test_a_check_the_original_passes_and_the_mutant_fails_kills_it(known):
    doc, ts, tmp = known
    # the judge sees nothing (every judgement equivalent): only the check can kill

    def blind_judge(model, messages, schema):
        user = "\n".join(str(m.get("content") or "") for m in messages if m["role"] == "user")
        if "original_run" in scripted_rules.read_data_blocks(user):
            return json.dumps({"verdict": "equivalent", "behaviour_delta": "", "original_directness": 5,
                               "candidate_directness": 5, "interpretation_notes": "none"})  # fmt: skip
        return uses_named_sections(model, messages, schema)

    scripted.model("rules").handler = blind_judge
    check = Assertion(type="contains", value="delta cache", target="transcript")
    cases = [c.model_copy(update={"assertions": [check]}) if c.id == "c4" else c for c in ts.cases]
    ts = sets.confirm(ts.model_copy(update={"cases": cases}), doc.hash)
    got = by_section(prepared(doc, ts, tmp).run())
    assert got["Delta"]["status"] == "killed" and got["Delta"]["killed_by"] == ["c4"]
    assert got["Delta"]["evidence"][0]["checks_lost"]
    assert {s for s, m in got.items() if m["status"] == "killed"} == {"Delta"}


def test_a_kill_on_a_case_noisy_in_aa_is_within_noise(known):
    doc, ts, tmp = known

    def noisy_judge(model, messages, schema):
        user = "\n".join(str(m.get("content") or "") for m in messages if m["role"] == "user")
        b = scripted_rules.read_data_blocks(user)
        if "original_run" in b and b["original_run"] == b["candidate_run"]:  # the A/A replay
            return json.dumps({"verdict": REGRESSED, "behaviour_delta": "noise", "original_directness": 5,
                               "candidate_directness": 5, "interpretation_notes": "none"})  # fmt: skip
        return uses_named_sections(model, messages, schema)

    scripted.model("rules").handler = noisy_judge
    rep = prepared(doc, ts, tmp, aa=True).run()
    killed = [m for m in rep.report["mutants"] if m["status"] == "killed"]
    assert killed and all(m["within_noise"] for m in killed)
    assert rep.report["killed_within_noise"] == len(killed)


def test_the_set_must_be_confirmed_and_the_command_exits_by_min_score(known, capsys):
    doc, ts, tmp = known
    unconfirmed = ts.model_copy(update={"user_confirmed": False})
    (tmp / "raw.json").write_text(unconfirmed.model_dump_json())
    base = ["mutate", "--original", str(tmp / "chores.md"), "--runner-model", "scripted/rules",
            "--db", str(tmp / "abeq.db"), "--concurrency", "1", "--allow-thin"]  # fmt: skip
    assert main([*base, "--transfer-set", str(tmp / "raw.json")]) == 2
    assert "not confirmed" in capsys.readouterr().err
    out = tmp / "m.json"
    common = [
        *base,
        "--transfer-set",
        str(tmp / "set.json"),
        "--out",
        str(out),
        "--markdown",
        str(tmp / "m.md"),
    ]
    assert main([*common, "--min-score", "0.9"]) == 1  # the score is 0.5
    assert json.loads(out.read_text())["score"] == 0.5
    assert main([*common, "--min-score", "0.5"]) == 0
    assert main([*common]) == 0
    err = capsys.readouterr().err
    assert "at most" in err and "survived: blind" in err and "mutation score 50%" in err
    assert "| Epsilon | section | the whole section | survived: blind |" in (tmp / "m.md").read_text()
    assert main([*common, "--max-mutants", "2"]) == 0
    assert json.loads(out.read_text())["count"] == 2


def test_the_score_stands_with_the_sets_trust_figures(known, capsys):
    from abeq.results.reports import history
    from abeq.results.store.store import Store

    doc, ts, tmp = known
    db = str(tmp / "abeq.db")
    check = ["check-set", "--original", str(tmp / "chores.md"), "--transfer-set", str(tmp / "set.json")]
    assert main([*check, "--db", db, "--allow-thin"]) == 0
    assert "mutation score" not in capsys.readouterr().out  # none measured yet
    prepared(doc, ts, tmp).run()
    main([*check, "--db", db, "--allow-thin"])
    assert "mutation score: 50% (3 of 6 section deletions noticed" in capsys.readouterr().out
    main([*check, "--db", db, "--allow-thin", "--json"])
    assert json.loads(capsys.readouterr().out)["mutation"]["score"] == 0.5
    # a run's report states the set's latest score, and History shows it per round
    md = tmp / "run.md"
    doc_path = str(tmp / "chores.md")
    run = ["run", "--original", doc_path, "--candidate", doc_path, "--transfer-set", str(tmp / "set.json"),
           "--runner-model", "scripted/rules", "--db", db, "--allow-thin",
           "--review", "r", "--markdown", str(md), "--out", str(tmp / "r.json")]  # fmt: skip
    assert main(run) == 0
    assert "mutation score of this set: 50%" in capsys.readouterr().err
    assert "Mutation score of this set: 50%" in md.read_text()
    assert [r["mutation score"] for r in history.review_history(Store(db), "r")] == [0.5]
    # the mutants' runs are no person's candidates: Compare's run picker leaves them out
    from abeq.desk.compare_vm import judged_runs

    assert [r["review_id"] for r in judged_runs(Store(db))] == [Store(db).inputs.review("r")["id"]]
