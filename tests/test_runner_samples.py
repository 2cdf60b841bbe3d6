"""--runner-samples N: each arm runs N times per case, each sample its own seed and cache key; a
case is regressed only when the candidate keeps a behaviour less often than the teacher beyond
chance (one-sided Fisher exact test), and the rates are shown either way.

The scripted runner keeps a list item marked "{kept K/N}" in K of the N seeds 0..N-1, so a
candidate that keeps a rule in k of N samples is a document, run through the real pipeline."""

import json
import sqlite3

import pytest
from conftest import with_cases

from abeq.documents import Document
from abeq.execution.config import RunConfig
from abeq.execution.engine import Engine
from abeq.execution.estimate import estimate
from abeq.execution.preflight import samples_warnings
from abeq.execution.samples import (
    JUDGE_BEHAVIOUR,
    decide,
    fisher_less,
    holm,
    judge_rate,
    least_samples,
    rate,
)
from abeq.execution.settings import RunSettings
from abeq.results.reports.record import run_record
from abeq.results.reports.report import build_report, exit_code
from abeq.schemas.record import RunRecord
from abeq.vocab import DIVERGED, EQUIVALENT, REGRESSED

RULE = (
    "- Write each entry as one past-tense sentence describing what changed for the user, not how the "
    "code changed."
)


def kept(example, k: int, n: int) -> Document:
    """The original with one rule kept in k of n samples."""
    text = example["original"].text
    assert RULE in text
    return Document("SKILL.k.md", text.replace(RULE, f"{RULE} {{kept {k}/{n}}}"))


def two_cases(example):
    return with_cases(example, example["ts"].cases[:2])


def run(store, example, candidate, n, **kw):
    settings = RunSettings(runner_model="scripted/rules", runner_samples=n, allow_thin=True, **kw)
    eng = Engine(store, example["original"], candidate, two_cases(example), settings)
    return build_report(store, eng.run()), eng


def made(store, run_id, kind):
    return store.sql.all(
        "select count(*) n from calls where run_id = ? and kind = ? and cached = 0", [run_id, kind]
    )[0]["n"]


def test_the_exact_test_on_counts():
    assert fisher_less(5, 5, 5, 5) == 1.0
    assert fisher_less(5, 5, 4, 5) == pytest.approx(0.5)
    assert fisher_less(5, 5, 1, 5) == pytest.approx(5 / 210)
    assert fisher_less(3, 3, 0, 3) == pytest.approx(1 / 20)
    assert least_samples() == 3  # at N <= 2 no count can be called lost at 0.05


def test_the_same_counts_give_the_same_decision():
    for kt, kc in [(5, 5), (5, 4), (5, 1), (3, 0), (4, 2)]:
        family = holm([rate("r", kt, kc, 5), judge_rate([EQUIVALENT] * 5, [EQUIVALENT] * 5)])
        verdicts = [EQUIVALENT] * kc + [REGRESSED] * (5 - kc)
        assert decide(family, verdicts) == decide(holm(list(reversed(family))), list(reversed(verdicts)))


def test_holm_holds_the_smallest_p_to_alpha_over_m():
    one = holm([rate("a", 5, 1, 5)])  # p = 0.024 <= 0.05
    assert one[0].lost
    many = holm([rate("a", 5, 1, 5)] + [rate(f"b{i}", 5, 5, 5) for i in range(2)])  # 0.024 > 0.05 / 3
    assert not any(r.lost for r in many) and many[0].undecided


def rates(row) -> dict[str, tuple[int, int, bool]]:
    return {r["behaviour"]: (r["teacher"], r["candidate"], r["lost"]) for r in row.sampling["rates"]}


@pytest.mark.parametrize(
    ("k", "verdict", "undecided"),
    [(8, EQUIVALENT, False), (7, DIVERGED, True), (1, REGRESSED, False)],
)
def test_a_rule_kept_in_k_of_8_samples(store, example, k, verdict, undecided):
    rr, _ = run(store, example, kept(example, k, 8), 8)
    for row in rr.rows:
        seen = rates(row)
        assert seen[JUDGE_BEHAVIOUR] == (8, k, verdict == REGRESSED), row.case_id
        # the case's check is a behaviour of its own: kept on both sides
        assert [v for b, v in seen.items() if b.startswith("check ")] == [(8, 8, False)]
        assert row.sampling["pair_verdicts"].count(EQUIVALENT) == k
        assert (row.verdict, row.undecided) == (verdict, undecided)
        if verdict != EQUIVALENT:
            assert f"{JUDGE_BEHAVIOUR}: teacher 8/8, candidate {k}/8" in row.behaviour_delta
    assert exit_code(rr) == (1 if verdict == REGRESSED else 0)


def test_three_samples_cannot_call_a_loss_among_two_behaviours(store, example):
    """Holm's correction over the judge and the case's check: 0 of 3 is lower, not beyond chance."""
    rr, _ = run(store, example, kept(example, 0, 3), 3)
    assert {(r.verdict, r.undecided) for r in rr.rows} == {(DIVERGED, True)}
    assert least_samples(len(rr.rows[0].sampling["rates"])) == 4 > 3 == least_samples(1)


def test_one_sample_is_the_run_it_was(store, example):
    """At N=1 nothing changes: the same keys, no samples recorded, the judge's verdict as before."""
    rr, eng = run(store, example, kept(example, 0, 1), 1)
    assert all(r.sampling is None for r in rr.rows) and {r.verdict for r in rr.rows} == {REGRESSED}
    assert "runner_samples" not in eng.cfg.key_parts() and "runner_samples" not in eng.cfg.settings()
    assert eng.cfg.runner.temperature == 0.0


def test_samples_have_their_own_keys_temperature_and_run_key(store, example):
    one = Engine(
        store,
        example["original"],
        example["lossy"],
        example["ts"],
        RunSettings(runner_model="scripted/rules"),
    )
    five = Engine(
        store,
        example["original"],
        example["lossy"],
        example["ts"],
        RunSettings(runner_model="scripted/rules", runner_samples=5),
    )
    assert five.cfg.runner.temperature == 1.0 and five.config_key() != one.config_key()
    assert five.cfg.settings()["runner_samples"] == 5
    # a resumed run is the run it was: its samples and their temperature come back from the store
    back = RunConfig.from_settings(five.cfg.settings())
    assert (back.runner_samples, back.runner, back.key_parts()) == (5, five.cfg.runner, five.cfg.key_parts())
    rr, _ = run(store, example, kept(example, 3, 5), 5)
    keys = rr.rows[0].sampling["teacher_keys"]
    assert len(set(keys)) == 5 and keys[0] == rr.rows[0].teacher_key


def test_round_two_pays_no_teacher_sample_and_a_larger_n_only_the_new_ones(store, example):
    rr1, _ = run(store, example, kept(example, 1, 5), 5)
    assert made(store, rr1.run["id"], "runner-teacher") == 10  # 2 cases x 5 samples
    assert made(store, rr1.run["id"], "judge-aa") == 10  # the teacher's samples against each other
    rr2, _ = run(store, example, kept(example, 2, 5), 5)
    assert made(store, rr2.run["id"], "runner-teacher") == 0
    assert made(store, rr2.run["id"], "runner-candidate") == 10
    rr3, eng = run(store, example, kept(example, 2, 8), 8)
    assert made(store, rr3.run["id"], "runner-teacher") == 6  # samples 5, 6, 7 of each case
    assert rates(rr3.rows[0])[JUDGE_BEHAVIOUR][0] == 8


def test_the_estimate_counts_n_runs_and_what_is_cached(store, example):
    cand = kept(example, 1, 5)
    settings = RunSettings(runner_model="scripted/rules", runner_samples=5, allow_thin=True)
    eng = Engine(store, example["original"], cand, two_cases(example), settings)
    eng.prepare()
    est = estimate(eng)
    assert est["runner_calls"] == 20 and est["teacher_cached"] == 0 and est["judge_calls"] == 20
    eng.run()
    later = Engine(store, example["original"], cand, two_cases(example), settings.with_args(runner_samples=7))
    est = estimate(later)
    assert est["teacher_cached"] == 10 and est["runner_calls"] == 4 + 14


def test_the_record_carries_the_samples_and_validates(store, example):
    rr, _ = run(store, example, kept(example, 0, 6), 6)
    rec = run_record(store, rr)
    RunRecord.model_validate(rec)
    assert rec["run"]["runner_samples"] == 6 and rec["run"]["runner_temperature"] == 1.0
    case = rec["cases"][0]["runner_samples"]
    assert (
        case["n"] == 6
        and any(r["lost"] for r in case["rates"])
        and case["test"].startswith("one-sided Fisher")
    )
    assert rec["report"]["cases"][0]["verdict"] == REGRESSED  # the seed report's shape, unchanged


def test_fail_fast_stops_on_the_first_case_decided_regressed(store, example):
    settings = RunSettings(runner_model="scripted/rules", runner_samples=6, fail_fast=True, concurrency=1)
    eng = Engine(store, example["original"], kept(example, 0, 6), example["ts"], settings)
    rr = build_report(store, eng.run())
    assert rr.stopped_early() and len(rr.report["cases"]) == 1 and exit_code(rr) == 1


def test_undecided_within_chance_does_not_fail_the_gate(store, example):
    rr, _ = run(store, example, kept(example, 1, 2), 2)  # 2 samples: nothing can be called lost
    assert {r.verdict for r in rr.rows} == {DIVERGED} and all(r.undecided for r in rr.rows)
    assert exit_code(rr) == 0
    assert rr.with_errors()["undecided"] == [r.case_id for r in rr.rows]  # beside the report's schema


def test_sampling_the_embedded_model_is_warned_before_the_run(example, tmp_path):
    from abeq.api import prepare_run

    many = RunSettings(runner_samples=5).config("skill")
    assert any("not worth the time" in w for w in samples_warnings(many))
    assert samples_warnings(RunSettings().config("skill")) == []
    assert (
        samples_warnings(RunSettings(runner_model="scripted/rules", runner_samples=5).config("skill")) == []
    )
    # what the CLI prints as "warning:" before the run starts (nothing has been called yet)
    ex = example
    prepared = prepare_run(
        ex["original"], ex["lossy"], ex["ts"], store=str(tmp_path / "w.db"), runner_samples=5
    )
    assert any("not worth the time" in w for w in prepared.warnings)
    prepared.store.close()


def test_the_cli_takes_runner_samples_and_stores_them(run_args, tmp_path):
    from abeq.cli import main

    out = tmp_path / "r.json"
    code = main(run_args("--runner-samples", "6", "--out", str(out), candidate="candidate-lossy.md"))
    assert code == 1
    with sqlite3.connect(tmp_path / "abeq.db") as c:
        cfg = json.loads(c.execute("select config from runs").fetchone()[0])
        assert cfg["settings"]["runner_samples"] == 6
        assert c.execute("select count(*) from run_cases where samples is not null").fetchone()[0] == 7


def test_the_markdown_report_shows_the_rates_beside_the_verdicts(store, example):
    from abeq.results.reports.exports import markdown

    rr, _ = run(store, example, kept(example, 4, 5), 5)
    md = markdown(store, rr)
    assert "## Runner samples" in md and "temperature 1" in md
    assert "teacher 5/5, candidate 4/5" in md and f"{DIVERGED} (undecided)" in md


def test_the_review_page_shows_the_rates_and_a_sample_pair_on_request(app, db, example):
    from abeq.results.store.store import Store

    store = Store(db)
    settings = RunSettings(runner_model="scripted/rules", runner_samples=3, allow_thin=True, review="s")
    Engine(store, example["original"], kept(example, 1, 3), two_cases(example), settings).run()
    app.run()
    app.sidebar.selectbox(key="review_id").select(store.inputs.review("s")["id"]).run()
    app.switch_page("desk_pages/4_review.py").run()
    assert not app.exception
    assert any("Runner samples" in m.value for m in app.markdown)
    table = app.dataframe[0].value
    shown = dict(zip(table["behaviour"], zip(table["original"], table["candidate"])))
    assert shown[JUDGE_BEHAVIOUR] == ("3/3", "1/3")
    app.selectbox(key=f"sample:{example['ts'].cases[0].id}").select(1).run()
    assert not app.exception
    app.switch_page("desk_pages/3_run.py").run()
    assert app.number_input(key="runner_samples").value == 1
    app.number_input(key="runner_samples").set_value(3).run()
    said = " ".join(str(e.value) for e in [*app.caption, *app.markdown, *app.info, *app.warning])
    assert "--runner-samples 3: a behaviour the candidate never shows" in said


def test_a_small_n_is_said_before_the_run_and_undecided_cases_after(run_args, tmp_path, capsys):
    from abeq.cli import main
    from abeq.execution.preflight import samples_notice

    assert samples_notice(1) == [] and samples_notice(30) == []
    assert "at most 3 behaviour(s)" in samples_notice(4)[0]  # p = 1/70: 0.05 x 70 = 3.5
    assert samples_notice(5) == []  # 12 behaviours
    # a case with no check tests one behaviour, which 3 samples can decide (p = 0.05): exit 1; the
    # cases with a check test two, which they cannot: undecided
    assert main(run_args("--runner-samples", "3", candidate="candidate-lossy.md", quiet=None)) == 1
    err = capsys.readouterr().err
    assert "--runner-samples 3: a behaviour the candidate never shows" in err
    assert "undecided (a behaviour shown less often on the candidate, within chance at 3 samples" in err


def test_two_checks_with_one_label_are_two_behaviours():
    from abeq.execution.sampled import check_rates
    from abeq.schemas import CheckResult

    one = CheckResult(label='contains "x"', type="contains", kind="code", teacher=True, candidate=False)
    rates = check_rates([[one, one]] * 3, 3)
    assert [(r.behaviour, r.teacher, r.candidate) for r in rates] == [('check contains "x"', 3, 0)] * 2
