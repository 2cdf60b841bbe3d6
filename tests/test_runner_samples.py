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
    same_rate,
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
        same, same_reversed = (
            same_rate([EQUIVALENT] * 5, verdicts),
            same_rate([EQUIVALENT] * 5, verdicts[::-1]),
        )
        assert decide(family, same) == decide(holm(list(reversed(family))), same_reversed)


def test_holm_holds_the_smallest_p_to_alpha_over_m():
    one = holm([rate("a", 5, 1, 5)])  # p = 0.024 <= 0.05
    assert one[0].lost
    # two more behaviours whose counts could each reach p = 0.024: m = 3, and 0.024 > 0.05 / 3
    many = holm([rate("a", 5, 1, 5)] + [rate(f"b{i}", 2, 2, 5) for i in range(2)])
    assert not any(r.lost for r in many) and many[0].undecided


def test_a_behaviour_that_cannot_reach_significance_is_not_counted_in_m():
    """Tarone: a check both sides always pass (or never pass) could never be called lost, so it
    does not halve the level the judge's loss is held to (issue 47)."""
    judge = rate("judge", 3, 0, 3)  # p = 0.05: lost on its own
    for idle in (rate("check always", 3, 3, 3), rate("check never", 0, 0, 3)):
        assert [r.lost for r in holm([judge, idle])] == [True, False]
        assert not idle.testable
    assert not holm([judge, rate("check lost too", 3, 0, 3)])[0].lost  # a testable one still counts: m = 2


def rates(row) -> dict[str, tuple[int, int, bool]]:
    return {r["behaviour"]: (r["teacher"], r["candidate"], r["lost"]) for r in row.sampling["rates"]}


@pytest.mark.parametrize(
    ("k", "verdict", "undecided"),
    # 7 of 8: a loss of half the rule is ruled out (decided); 5 of 8 (p = 0.1) is not yet; 4 of 8
    # (p = 0.038) is a loss once the always-passing check is out of m
    [(8, EQUIVALENT, False), (7, EQUIVALENT, False), (5, EQUIVALENT, True), (4, REGRESSED, False)],
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
        if verdict != EQUIVALENT or undecided:
            assert f"{JUDGE_BEHAVIOUR}: teacher 8/8, candidate {k}/8" in row.behaviour_delta
    assert exit_code(rr) == (1 if verdict == REGRESSED else 0)


def test_an_always_passing_check_changes_nothing(store, example):
    """The same evidence (the rule kept in 0 of 3 samples) on one case with its check and on the same
    case without it: one verdict. Before Tarone the check, passed 3/3 on both sides, entered Holm's m
    and made the first "diverged (undecided)" and the second "regressed" (issue 47)."""
    case = next(c for c in example["ts"].cases if c.assertions)
    bare = case.model_copy(update={"id": f"{case.id}-bare", "assertions": []})
    eng = Engine(
        store,
        example["original"],
        kept(example, 0, 3),
        with_cases(example, [case, bare]),
        RunSettings(runner_model="scripted/rules", runner_samples=3, allow_thin=True),
    )
    rr = build_report(store, eng.run())
    by_id = {r.case_id: r for r in rr.rows}
    checked, alone = by_id[case.id], by_id[bare.id]
    assert (checked.verdict, checked.undecided) == (alone.verdict, alone.undecided) == (REGRESSED, False)
    idle = [r["testable"] for r in checked.sampling["rates"] if r["behaviour"].startswith("check ")]
    assert idle == [False]  # passed 3/3 on both sides: out of m


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
    assert {r.verdict for r in rr.rows} == {EQUIVALENT} and all(r.undecided for r in rr.rows)
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
    assert "teacher 5/5, candidate 4/5" in md and f"{EQUIVALENT} (undecided)" in md


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
    assert "no behaviour the candidate never shows can be called lost" in samples_notice(2)[0]
    # 2 samples decide nothing: the lost rules are undecided, and the run passes
    assert main(run_args("--runner-samples", "2", candidate="candidate-lossy.md", quiet=None)) == 0
    err = capsys.readouterr().err
    assert "--runner-samples 2: no behaviour the candidate never shows can be called lost" in err
    assert "The review so far: N x 2 samples x (1 + rounds) = 28 runner calls." in err  # 7 cases, 2 arms
    assert "undecided (a behaviour shown less often on the candidate, within chance at 2 samples" in err


def test_two_checks_with_one_label_are_two_behaviours():
    from abeq.execution.sampled import check_rates
    from abeq.schemas import CheckResult

    one = CheckResult(label='contains "x"', type="contains", kind="code", teacher=True, candidate=False)
    rates = check_rates([[one, one]] * 3, 3)
    assert [(r.behaviour, r.teacher, r.candidate) for r in rates] == [('check contains "x"', 3, 0)] * 2


class NoisyCalls:
    """A Calls whose runs are all alike (an identical candidate) and whose judge errs on `error` of
    the pairs, at random (seeded): a wrong verdict is regressed or diverged. `verdict` is the judge's
    answer otherwise (the candidate's pairs only)."""

    def __init__(self, rng, error: float, verdict=EQUIVALENT):
        self.rng, self.error, self.verdict = rng, error, verdict

    async def runner(self, doc, case, kind, policy, sample):
        from types import SimpleNamespace

        return f"{kind}:{sample}", SimpleNamespace(self_report=SimpleNamespace(gates_hit=[]))

    async def judge(self, case, okey, o, ckey, cand, s, k, truncated, policy, kind="judge"):
        right = self.verdict if kind == "judge" else EQUIVALENT
        v = self.rng.choice([REGRESSED, DIVERGED]) if self.rng.random() < self.error else right
        return f"{okey}|{ckey}|{kind}", {"verdict": v, "behaviour_delta": "" if v == EQUIVALENT else "x"}


def sampled_verdicts(example, calls, cases: int, n: int = 16) -> list[str]:
    import asyncio

    from abeq.execution.sampled import run_sampled

    case = next(c for c in example["ts"].cases if not c.assertions)
    cfg = RunConfig(runner_samples=n)
    return [asyncio.run(run_sampled(calls, cfg, None, None, case, None))[1]["verdict"] for _ in range(cases)]


def test_an_identical_candidate_with_a_noisy_judge_is_not_called_diverged(example):
    """N = 16, the judge wrong on 30% of pairs on both sides: the candidate's pairs are held against
    the teacher's own, so the noise cancels. Before, "equivalent" needed all 16 pairs judged
    equivalent (0.7^16 = 0.3%): nearly every case was diverged (issue 47: 7/7)."""
    import random

    seen = sampled_verdicts(example, NoisyCalls(random.Random(47), 0.3), cases=200)
    # exact, on the counts: P(diverged) = 1.7%, P(regressed) = 1.1% at these figures
    assert seen.count(DIVERGED) <= 10 and seen.count(REGRESSED) <= 10, (
        seen.count(DIVERGED),
        seen.count(REGRESSED),
    )
    # and a candidate the judge calls different on every pair is still diverged through the noise
    assert set(sampled_verdicts(example, NoisyCalls(random.Random(47), 0.3, DIVERGED), cases=5)) == {DIVERGED}
