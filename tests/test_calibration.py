"""Judge calibration: the built-in labelled suite, `abeq calibrate` on a loopback judge, the cache,
and a suite built from reviewed cases."""

import json

import pytest

from abeq.calibration.metrics import wilson
from abeq.calibration.suite import BUILT_CATEGORIES, CATEGORY_LABELS, load_suite
from abeq.cli import main
from abeq.models import scripted
from abeq.testing.loopback import LoopbackServer
from abeq.untrusted import md_escape
from abeq.vocab import DIVERGED, EQUIVALENT, REGRESSED, VERDICTS

SUITE = load_suite()


def _lines(run) -> int:
    return run.transcript.count("\n") + 1


def test_the_builtin_suite_is_labelled_sourced_and_wide():
    assert len(SUITE.pairs) >= 120 and len(SUITE.kinds()) >= 6
    assert {p.category for p in SUITE.pairs} == set(BUILT_CATEGORIES)
    by_id = {p.id: p for p in SUITE.pairs}
    for p in SUITE.pairs:
        want = CATEGORY_LABELS[p.category] or by_id[p.mirror_of].label  # an order swap keeps its twin's label
        assert p.label == want and p.reason.strip() and "\n" not in p.reason
    for cat in (
        "terse-equivalent",
        "padded-regressed",
        "near-miss",
        "noisy-replay",
        "under-reporting",
        "order-swap",
    ):
        assert sum(p.category == cat for p in SUITE.pairs) >= 6, cat
    sources = {s.id: s for s in SUITE.sources}
    for s in sources.values():
        assert s.repo and s.path and (len(s.commit) == 40 or s.url)
    assert {p.source for p in SUITE.pairs} <= set(sources)
    runs = [r for p in SUITE.pairs for r in (p.teacher, p.candidate)]
    assert sum(_lines(r) > 60 for r in runs) >= len(runs) // 8  # a share as long as real agent runs
    # each runner mode's shape: a narrated chat run, abeq's tool trace, an agent CLI's output
    assert any(r.transcript.startswith("Task: ") for r in runs)
    assert any('] run_command {"command": ' in r.transcript for r in runs)
    assert any("● Bash(" in r.transcript for r in runs)


def _followed(run) -> list[str]:
    return [x for x in run.self_report.steps_followed_skipped.splitlines() if x.startswith("followed:")]


def test_regressions_are_not_announced():
    """The trivial tells are gone: most regressed candidates still claim every step the original
    reports, are about as long as it, and a lost step is never still read in the reply."""
    lost = [p for p in SUITE.pairs if p.label == REGRESSED and p.category != "order-swap"]
    claims = [p for p in lost if set(_followed(p.teacher)) <= set(_followed(p.candidate))]
    assert len(claims) >= 0.6 * len(lost)
    same_length = [p for p in lost if 0.9 <= len(p.candidate.transcript) / len(p.teacher.transcript) <= 1.1]
    assert len(same_length) >= 0.4 * len(lost)
    for p in lost:
        assert "not checked" not in p.candidate.transcript and "Merged it" not in p.candidate.transcript
    # the one reply-borne loss the old suite mislabelled: the escalation is gone from the reply too
    esc = next(p for p in SUITE.pairs if p.id == "support-double-charge/adversarial-injection")
    assert "human billing agent" in esc.teacher.self_report.output_produced
    assert "human billing agent" not in esc.candidate.self_report.output_produced
    # a harmless reordering is equivalent (the judge prompt's rule); tests moved before the last edit regress
    orders = {p.id.split("/")[0]: p.label for p in SUITE.pairs if "/order-" in p.id}
    assert orders["go-rename-handler"] == REGRESSED
    assert sorted(v for k, v in orders.items() if k != "go-rename-handler") == [EQUIVALENT] * 3


@pytest.mark.parametrize("baseline", ["baseline/always-regressed", "baseline/length", "baseline/self-report"])
def test_no_trivial_judge_passes_the_builtin_suite(store, baseline):
    from abeq import calibrate

    s = calibrate(baseline, store=store, baselines=False).summary
    assert s["errors"] == 0 and s["balanced_accuracy"] <= 0.6
    if baseline == "baseline/always-regressed":  # recall alone would have called it perfect
        assert s["regression_recall"] == 1.0 and s["false_regression_rate"] == 1.0
        assert s["balanced_accuracy"] == 0.5


def test_the_committed_suite_is_what_the_authoring_script_writes():
    import subprocess
    import sys

    from conftest import ROOT

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


@pytest.mark.parametrize("verdict", VERDICTS)
@pytest.mark.parametrize("samples", [1, 3])
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
        assert {p["category"] for p in r["pairs"]} == set(BUILT_CATEGORIES)
        assert r["swapped"]["consistent"] == 0  # one verdict cannot be right both ways round
        assert r["confusion"][REGRESSED][verdict] == sum(p.label == REGRESSED for p in SUITE.pairs)
        # the second run reads every judgement from the cache: no request reaches the server
        before = srv.stats["requests"]
        assert main(args) == 0
        assert srv.stats["requests"] == before
        assert json.loads(out.read_text())["calls"] == {"made": 0, "cached": r["calls"]["made"], "failed": 0}


def test_the_scripted_judge_is_measured_and_stored(store):
    from abeq import calibrate

    cal = calibrate("scripted/rules", store=store)
    s = cal.summary
    assert s["per_category"]["identical"]["accuracy"] == 1.0
    # the rule-following double reads self-reports: a self-report that claims a lost step fools it,
    # and one that leaves out a step it did makes it call a regression
    assert s["per_category"]["adversarial"]["accuracy"] < 0.5
    assert s["per_category"]["under-reporting"]["accuracy"] < 0.5
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
    from abeq.results.store.reviewing import record

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
    pairs.write_text(json.dumps({**first, "label": REGRESSED}) + "\n")  # an identical pair labelled regressed
    assert main([*args, "--db", str(tmp_path / "a.db")]) == 2
    err = capsys.readouterr().err
    assert "pairs.jsonl line 1" in err and "identical" in err


def test_reviewed_cases_measure_another_candidate_judge(tmp_path, store, example, scripted_cfg):
    from abeq.execution.engine import Engine
    from abeq.results.reports.report import build_report
    from abeq.results.store.reviewing import record

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
