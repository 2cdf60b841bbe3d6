"""Judge calibration: the built-in labelled suite, `abeq calibrate` on a loopback judge, the cache,
and a suite built from reviewed cases."""

import json
import re
import subprocess
import sys

import pytest
from conftest import ROOT

from abeq.calibration.metrics import wilson
from abeq.calibration.suite import BUILT_CATEGORIES, CATEGORY_LABELS, load_suite
from abeq.cli import main
from abeq.models import scripted
from abeq.testing.loopback import LoopbackServer, line_diff_judge
from abeq.untrusted import md_escape
from abeq.vocab import DIVERGED, EQUIVALENT, REGRESSED

SUITE = load_suite()


def _lines(run) -> int:
    return run.transcript.count("\n") + 1


def test_the_builtin_suite_is_labelled_sourced_and_wide():
    assert len(SUITE.pairs) >= 150 and len(SUITE.kinds()) >= 6
    cats = {p.category for p in SUITE.pairs}
    assert cats <= set(BUILT_CATEGORIES) and len(cats) >= 10
    by_id = {p.id: p for p in SUITE.pairs}
    for p in SUITE.pairs:
        want = CATEGORY_LABELS[p.category] or by_id[p.mirror_of].label  # an order swap keeps its twin's label
        assert p.label == want and p.reason.strip() and "\n" not in p.reason
    for cat in ("step-dropped", "step-weakened", "extra-step", "redundant-lines-dropped", "unreported-step"):
        assert sum(p.category == cat for p in SUITE.pairs) >= 6, cat
    assert sum(p.category == "order-swap" for p in SUITE.pairs) >= 6
    sources = {s.id: s for s in SUITE.sources}
    for s in sources.values():
        assert s.repo and s.path and (len(s.commit) == 40 or s.url)
    assert {p.source for p in SUITE.pairs} <= set(sources)
    runs = [r for p in SUITE.pairs for r in (p.teacher, p.candidate)]
    assert sum(_lines(r) > 40 for r in runs) >= len(runs) // 4  # a share as long as real agent runs
    # each runner mode's shape: a narrated chat run, abeq's tool trace, an agent CLI's output
    assert any(r.transcript.startswith("Task: ") for r in runs)
    assert any('] run_command {"command": ' in r.transcript for r in runs)
    assert any("● Bash(" in r.transcript for r in runs)


def test_no_two_pairs_show_the_same_runs():
    """Only an order-swap pair repeats another's runs (shown the other way round, on purpose)."""
    seen: dict[str, str] = {}
    for p in SUITE.pairs:
        if p.mirror_of:
            continue
        key = p.teacher.model_dump_json() + p.candidate.model_dump_json()
        assert key not in seen, f"{p.id} repeats {seen.get(key)}"
        seen[key] = p.id


def test_the_surface_is_drawn_alike_for_every_label():
    """What gave the old suite away is now on both sides: regressions whose every step is told in
    other words, and pairs that lost nothing whose original lines go missing verbatim; a candidate
    shorter than its original, and a self-report naming a step of its own, under either label."""
    from abeq.models.baseline import line_diff

    def regressed(p):
        return p.label == REGRESSED

    def missing(p):  # some, but fewer than half, of the original's lines missing verbatim
        return line_diff(p.teacher.transcript, p.candidate.transcript)[0] == REGRESSED

    def shorter(p):
        return len(p.candidate.transcript) < len(p.teacher.transcript)

    def own(p):
        return p.candidate.self_report.improvisation != "none"

    def claims(p):
        return set(_followed(p.teacher)) <= set(_followed(p.candidate))

    pairs = [p for p in SUITE.pairs if not p.mirror_of]
    for tell in (missing, shorter, own, claims):
        reg = [tell(p) for p in pairs if regressed(p)]
        rest = [tell(p) for p in pairs if not regressed(p)]
        assert 0.15 < sum(reg) / len(reg) < 0.9 and 0.15 < sum(rest) / len(rest) < 0.9, tell.__name__
    assert any(
        regressed(p) and re.search(r"\b(\d+) of \1 steps narrated in other words", p.reason) for p in pairs
    )
    # a harmless reordering is equivalent (the judge prompt's rule); tests moved before the last edit regress
    orders = {p.label for p in pairs if p.category == "reordered-loss"}
    assert orders == {REGRESSED} and {
        p.id.split("/")[0] for p in pairs if p.category == "reordered-loss"
    } == {"go-rename-handler"}


def test_the_readme_counts_the_suites_regressions():
    n = sum(p.label == REGRESSED for p in SUITE.pairs)
    assert f"built-in suite's {n} labelled regressions" in " ".join((ROOT / "README.md").read_text().split())


def _followed(run) -> list[str]:
    return [x for x in run.self_report.steps_followed_skipped.splitlines() if x.startswith("followed:")]


def test_no_cheap_learner_beats_the_figure_stored_with_the_suite():
    """The family the suite was filtered against (bench/calibration/learners.py), refitted here
    (grouped by scenario, out of fold): no member may beat the stored best, which is at most 0.60
    with an upper bound at most 0.70. On the suite before this one the line-diff rule scored 0.96."""
    stored = SUITE.learners
    assert stored is not None and len(stored.members) >= 7
    best = stored.best()
    assert best.balanced_accuracy <= 0.60 and best.balanced_accuracy_ci95[1] <= 0.70
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "calibration" / "learners.py"), "--check", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    refit = json.loads(out.stdout)
    assert [m["name"] for m in refit] == [m.name for m in stored.members]
    for m in refit:
        assert m["balanced_accuracy"] <= best.balanced_accuracy, m


@pytest.mark.parametrize("baseline", ["baseline/always-regressed", "baseline/length", "baseline/self-report"])
def test_no_trivial_judge_passes_the_builtin_suite(store, baseline):
    from abeq import calibrate

    s = calibrate(baseline, store=store, baselines=False).summary
    assert s["errors"] == 0 and s["balanced_accuracy"] <= 0.6
    if baseline == "baseline/always-regressed":  # recall alone would have called it perfect
        assert s["regression_recall"] == 1.0 and s["false_regression_rate"] == 1.0
        assert s["balanced_accuracy"] == 0.5


def test_the_committed_suite_is_what_the_authoring_script_writes():
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "calibration" / "author.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_wilson_interval():
    assert wilson(0, 0) is None
    lo, hi = wilson(41, 44)
    assert 0.81 < lo < 0.83 and 0.97 < hi < 0.99
    assert wilson(10, 10)[1] == 1.0 and wilson(0, 10)[0] == 0.0


def _always(verdict):
    def handler(model, messages, schema):
        if "original_run" not in messages[-1]["content"]:
            return None
        delta = "" if verdict == EQUIVALENT else "a step changed"
        return json.dumps(
            {
                "verdict": verdict,
                "behaviour_delta": delta,
                "original_directness": 4,
                "candidate_directness": 4,
                "interpretation_notes": "fixed reply",
            }
        )

    return handler


@pytest.mark.parametrize(("verdict", "samples"), [(EQUIVALENT, 1), (DIVERGED, 1), (REGRESSED, 3)])
def test_a_judge_that_always_says_one_verdict(tmp_path, verdict, samples):
    scripted.model("scripted").handler = _always(verdict)
    db, out = str(tmp_path / "a.db"), tmp_path / "cal.json"
    with LoopbackServer() as srv:
        args = ["calibrate", "--judge-model", "openai/scripted", "--api-base", srv.url, "--db", db]
        args += ["--judge-samples", str(samples), "--out", str(out), "--quiet"]
        assert main(args) == 0
        swapped = sum(1 for p in SUITE.pairs if p.swap_label)
        assert srv.stats["requests"] == (len(SUITE.pairs) + swapped) * samples
        r = json.loads(out.read_text())
        share = sum(p.label == verdict for p in SUITE.pairs) / len(SUITE.pairs)
        assert r["accuracy"] == pytest.approx(share, abs=1e-4)
        assert r["regression_recall"] == (1.0 if verdict == REGRESSED else 0.0)
        assert r["false_regression_rate"] == (1.0 if verdict == REGRESSED else 0.0)
        assert r["balanced_accuracy"] == 0.5  # one answer for everything is worth a coin
        for cat, c in r["per_category"].items():
            if CATEGORY_LABELS[cat]:
                assert c["accuracy"] == (1.0 if CATEGORY_LABELS[cat] == verdict else 0.0)
        assert r["position_bias"]["flipped"] == 0 and r["position_bias"]["judged"] >= 6
        assert {b["judge_model"] for b in r["baselines"]} == {
            "baseline/always-regressed",
            "baseline/length",
            "baseline/self-report",
        }
        assert [(p["id"], p["label"], p["verdict"]) for p in r["pairs"]] == [
            (p.id, p.label, verdict) for p in SUITE.pairs
        ]
        assert {p["category"] for p in r["pairs"]} == {p.category for p in SUITE.pairs}
        assert r["swapped"]["consistent"] == 0  # one verdict cannot be right both ways round
        assert r["confusion"][REGRESSED][verdict] == sum(p.label == REGRESSED for p in SUITE.pairs)
        if samples == 1:
            return  # what the cache gives back is the same for every judge: read once, with three samples
        # the second run reads every judgement from the cache: no request reaches the server
        before = srv.stats["requests"]
        assert main(args) == 0
        assert srv.stats["requests"] == before
        assert json.loads(out.read_text())["calls"] == {"made": 0, "cached": r["calls"]["made"], "failed": 0}


def test_the_scripted_judge_is_measured_and_stored(store):
    from abeq import calibrate

    cal = calibrate("scripted/rules", store=store)
    s = cal.summary
    # the rule-following double reads self-reports: a self-report that claims a lost step fools it,
    # and one that leaves out a step it did makes it call a regression
    claimed = [r for r, p in zip(cal.pairs, SUITE.pairs, strict=True) if "still claims" in p.reason]
    assert sum(r["verdict"] == r["label"] for r in claimed) < 0.5 * len(claimed)
    assert s["per_category"]["unreported-step"]["accuracy"] < 0.5
    assert 0 < s["regression_recall"] < 1 and s["swapped"]["pairs"] > 0
    # it reads the blocks by name, so the order they are shown in changes nothing
    assert s["position_bias"]["judged"] >= 6 and s["position_bias"]["flipped"] == 0
    assert [b["judge_model"] for b in cal.baselines] == [
        "baseline/always-regressed",
        "baseline/length",
        "baseline/self-report",
    ]
    [row] = store.calibrations.all("scripted/rules")
    assert row["regression_recall"] == s["regression_recall"] and row["prompt"] == cal.judge_prompt
    assert store.calibrations.latest("scripted/rules", cal.judge_prompt)["id"] == cal.id


def test_calibrate_needs_a_judge_model(tmp_path, capsys):
    assert main(["calibrate", "--db", str(tmp_path / "x.db")]) == 2
    assert "--judge-model" in capsys.readouterr().err


def test_a_suite_from_reviews_holds_exactly_the_reviewed_cases(tmp_path, store, example, scripted_cfg):
    from abeq.calibration.reviews import suite_from_reviews
    from abeq.execution.engine import Engine
    from abeq.results.reports.report import build_report
    from abeq.results.review.reviewing import record

    run_id = Engine(store, example["original"], example["lossy"], example["ts"], scripted_cfg()).run()
    rows = build_report(store, run_id).rows
    agreed, overridden = rows[0], rows[1]
    record(store, run_id, agreed.case_id, action="agree", verdict=None, reason="", reviewer="ann")
    record(
        store,
        run_id,
        overridden.case_id,
        action="override",
        verdict=DIVERGED,
        reason="harmless",
        reviewer="bo",
    )
    suite = suite_from_reviews(store)
    assert {(p.id.split("/", 1)[1], p.label) for p in suite.pairs} == {
        (agreed.case_id, agreed.judge_verdict),
        (overridden.case_id, DIVERGED),
    }
    # measured with the run's own judge, every judgement is the run's cached one: no model call
    out = tmp_path / "rev.json"
    assert main(["calibrate", "--from-reviews", "--db", store.path, "--out", str(out), "--quiet"]) == 0
    r = json.loads(out.read_text())
    assert r["calls"]["made"] == 0 and len(r["pairs"]) == 2
    assert {p["label"] for p in r["pairs"]} == {agreed.judge_verdict, DIVERGED}
    assert r["accuracy"] == 0.5  # the judge agrees with the agreement, not with the override


def _run_args(tmp_path, *extra):
    from conftest import EXAMPLE

    return [
        "run",
        "--original", str(EXAMPLE / "SKILL.md"),
        "--candidate", str(EXAMPLE / "candidate-lossy.md"),
        "--transfer-set", str(EXAMPLE / "transfer-set.json"),
        "--runner-model", "scripted/rules",
        "--db", str(tmp_path / "abeq.db"),
        "--confirm",
        *extra,
    ]  # fmt: skip


def test_a_judge_never_calibrated_is_said_to_be_and_min_recall_warns_before_the_run(tmp_path, capsys):
    md = tmp_path / "r.md"
    assert main(_run_args(tmp_path, "--min-judge-recall", "0.9", "--markdown", str(md), "--out", "-")) == 1
    err = capsys.readouterr().err
    warned = err.index("warning: judge scripted/rules was never calibrated")
    assert warned < err.index("calls made")  # before the run, not in its summary
    assert "## Judge" in md.read_text() and "was never calibrated" in md.read_text()
    assert main(["stats", "--db", str(tmp_path / "abeq.db")]) == 0
    assert "calibration: judge scripted/rules was never calibrated" in capsys.readouterr().out


def test_once_calibrated_the_figure_shows_beside_aa_and_kappa(tmp_path, capsys):
    db = str(tmp_path / "abeq.db")
    assert main(["calibrate", "--judge-model", "scripted/rules", "--db", db, "--quiet"]) == 0
    out = capsys.readouterr().out
    line = out.splitlines()[1].strip()  # "balanced accuracy …; caught k/n regressions …"
    caught = line.split("caught ")[1].split()[0]
    n = int(caught.split("/")[1])
    # the trivial judges are printed beside it, on the same suite
    for b in ("baseline/always-regressed", "baseline/length", "baseline/self-report"):
        assert f"    {b} " in out
    md = tmp_path / "r.md"
    assert (
        main(_run_args(tmp_path, "--min-judge-recall", "0.3", "--aa", "--markdown", str(md), "--out", "-"))
        == 1
    )
    err = capsys.readouterr().err
    assert "--min-judge-recall" not in err  # recall above 0.3, false regressions under 0.7
    assert "judge scripted/rules on the calibration suite abeq-builtin: balanced accuracy" in err
    assert (
        f"caught {caught} regressions" in err and "baselines on the same suite: always-regressed 50%" in err
    )
    text = md.read_text()
    assert f"caught {caught} regressions" in text and "A/A false-regression rate" in text
    assert "baselines on the same suite" in text
    assert main(["stats", "--json", "--db", db]) == 0
    # the baselines stand in the judge's figures, not as judges of their own (no run used them)
    [cal] = json.loads(capsys.readouterr().out)["calibration"]
    assert cal["calibrated"] and cal["current_prompt"] and f"{cal['regressions_caught']}/{n}" == caught
    assert 0 < cal["balanced_accuracy"] < 1 and len(cal["baselines"]) == 3
    assert main(_run_args(tmp_path, "--min-judge-recall", "0.95", "--out", "-")) == 1
    assert "is below --min-judge-recall 0.95" in capsys.readouterr().err


def test_a_judge_that_always_says_regressed_never_passes_its_minimum(tmp_path, capsys):
    db = str(tmp_path / "abeq.db")
    judge = ["--judge-model", "baseline/always-regressed"]
    assert main(["calibrate", *judge, "--db", db, "--quiet"]) == 0
    capsys.readouterr()
    # recall 100% would pass a recall-only minimum; its false-regression rate of 100% fails it
    main(_run_args(tmp_path, *judge, "--min-judge-recall", "0.8", "--out", "-"))
    err = capsys.readouterr().err
    assert "warning: judge baseline/always-regressed" in err and "the judge fails its minimum" in err
    assert "false-regression rate 100% is above 0.2" in err and "recall 100% is below" not in err


def test_the_run_record_carries_the_judges_calibration(tmp_path, capsys):
    db, rec = str(tmp_path / "abeq.db"), tmp_path / "r.record.json"
    assert main(_run_args(tmp_path, "--record", str(rec), "--out", "-")) == 1
    cal = json.loads(rec.read_text())["run"]["judge_calibration"]
    assert cal["calibrated"] is False and cal["regression_recall"] is None
    assert "judge scripted/rules was never calibrated" in cal["line"]
    assert main(["calibrate", "--judge-model", "scripted/rules", "--db", db, "--quiet"]) == 0
    md = tmp_path / "r.md"
    assert main(["export", "1", "--db", db, "--record", str(rec), "--markdown", str(md)]) == 0
    cal = json.loads(rec.read_text())["run"]["judge_calibration"]
    capsys.readouterr()
    assert main(["stats", "--json", "--db", db]) == 0
    [stats] = [
        c for c in json.loads(capsys.readouterr().out)["calibration"] if c["judge_model"] == "scripted/rules"
    ]
    assert cal == stats  # the figures abeq stats gives, and the Markdown report's sentence
    low, high = cal["regression_recall_ci95"]
    assert low < cal["regression_recall"] < high and cal["prompt"].startswith("equivalence-judge@")
    assert cal["accuracy"] is not None and cal["false_regression_rate"] is not None
    low, high = cal["balanced_accuracy_ci95"]
    assert low < cal["balanced_accuracy"] < high
    assert f"95% CI {low:.0%}-{high:.0%}" in cal["line"] and md_escape(cal["line"]) in md.read_text()


def test_a_suite_folder_of_ones_own_is_read_and_a_bad_line_is_named(tmp_path, capsys):
    from abeq.calibration.suite import write_suite

    mine = SUITE.model_copy(update={"name": "mine", "pairs": SUITE.pairs[:3]})
    write_suite(mine, tmp_path / "mine")
    out = tmp_path / "c.json"
    args = ["calibrate", "--judge-model", "scripted/rules", "--suite", str(tmp_path / "mine"), "--quiet"]
    assert main([*args, "--db", str(tmp_path / "a.db"), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["suite"] == "mine" and len(json.loads(out.read_text())["pairs"]) == 3
    pairs = tmp_path / "mine" / "pairs.jsonl"
    first = json.loads(pairs.read_text().splitlines()[0])
    wrong = EQUIVALENT if first["label"] == REGRESSED else REGRESSED  # a label its category cannot carry
    pairs.write_text(json.dumps({**first, "label": wrong}) + "\n")
    assert main([*args, "--db", str(tmp_path / "a.db")]) == 2
    err = capsys.readouterr().err
    assert "pairs.jsonl line 1" in err and first["category"] in err


def test_reviewed_cases_measure_another_candidate_judge(tmp_path, store, example, scripted_cfg):
    from abeq.execution.engine import Engine
    from abeq.results.reports.report import build_report
    from abeq.results.review.reviewing import record

    run_id = Engine(store, example["original"], example["lossy"], example["ts"], scripted_cfg()).run()
    rows = build_report(store, run_id).rows
    for r in rows[:3]:
        record(store, run_id, r.case_id, action="agree", verdict=None, reason="", reviewer="ann")
    record(
        store, run_id, rows[3].case_id, action="override", verdict=EQUIVALENT, reason="fine", reviewer="bo"
    )
    scripted.model("scripted").handler = _always(EQUIVALENT)
    out = tmp_path / "other.json"
    with LoopbackServer() as srv:
        args = ["calibrate", "--from-reviews", "--judge-model", "openai/scripted", "--api-base", srv.url]
        assert main([*args, "--db", store.path, "--out", str(out), "--quiet"]) == 0
        assert srv.stats["requests"] == 4  # the candidate judge is asked about each reviewed case
    r = json.loads(out.read_text())
    assert r["judge_model"] == "openai/scripted" and r["accuracy"] == 0.25 and r["regression_recall"] == 0.0


def test_a_rule_that_reads_no_behaviour_is_not_trusted(tmp_path, capsys):
    """The line-diff rule served as an OpenAI-compatible judge scored 96% on the suite before this
    one; here it scores at most 65%, and `abeq calibrate` ends by saying it is not to be trusted."""
    scripted.model("linediff").handler = line_diff_judge
    out = tmp_path / "cal.json"
    with LoopbackServer() as srv:
        args = [
            "calibrate",
            "--judge-model",
            "openai/linediff",
            "--api-base",
            srv.url,
            "--no-swap",
            "--quiet",
        ]
        assert main([*args, "--db", str(tmp_path / "a.db"), "--out", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["errors"] == 0 and r["balanced_accuracy"] <= 0.65
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1] == r["verdict"]["line"] and printed[-1].startswith("verdict: NOT trusted for gating")
    best = SUITE.learners.best()
    assert f"the best cheap learner's {best.balanced_accuracy:.0%} ({best.name})" in printed[-1]
    assert "exact McNemar p=" in printed[-1] and "--min-judge-recall" in printed[-1]
    assert any(line.startswith(f"    learner: {best.name} ") for line in printed)


def test_the_verdict_is_a_paired_test_against_the_best_learner():
    from abeq.calibration.metrics import mcnemar_exact, summarise, trust_verdict

    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(10, 0) == pytest.approx(2 / 2**10) and mcnemar_exact(0, 10) == mcnemar_exact(10, 0)
    pairs = [p for p in SUITE.pairs]
    best = SUITE.learners.best().model_dump()
    called = set(best["called_regressed"])

    def results(verdict_of):
        return [
            {"id": p.id, "category": p.category, "label": p.label, "verdict": verdict_of(p)} for p in pairs
        ]

    right = results(lambda p: p.label)  # a judge that is always right
    v = trust_verdict(right, summarise(right), best)
    assert v["trusted"] and v["p"] < 0.001 and v["gate_up_to"] == 1.0 and v["learner_only_right"] == 0
    # a judge that answers exactly as the best learner does: nothing to tell them apart
    same = results(lambda p: REGRESSED if p.id in called else EQUIVALENT)
    v = trust_verdict(same, summarise(same), best)
    assert v["trusted"] is False and v["p"] == 1.0 and v["judge_only_right"] == v["learner_only_right"] == 0
    # no learner figures (a suite of one's own): no verdict, but what the minimum would do
    v = trust_verdict(right, summarise(right), None)
    assert v["trusted"] is None and v["gate_up_to"] == 1.0
