"""`abeq calibrate`: how far to trust a judge model, measured on a labelled suite (the built-in one,
a folder of your own, or your reviewed cases)."""

from __future__ import annotations

import json
import sys

from ._common import EXIT_PASS, bounded, existing_store, model_spec, open_store, write_output
from ._settings import model_args


def register(sub) -> None:
    c = sub.add_parser(
        "calibrate",
        help="measure a judge model on a labelled suite: balanced accuracy, regression recall, false "
        "regressions, beside trivial baseline judges and cheap learners; ends with a trust verdict",
    )
    model_args(c)
    c.add_argument(
        "--judge-samples", type=bounded(int, 1, 15), default=1, help="judge samples per pair (majority)"
    )
    c.add_argument(
        "--suite", default=None, help="a suite folder (suite.json + pairs.jsonl); default: the built-in one"
    )
    c.add_argument(
        "--from-reviews",
        action="store_true",
        help="the suite is this database's reviewed cases, labelled with the reviewers' verdicts",
    )
    c.add_argument("--review", default=None, help="with --from-reviews: only this review's cases")
    c.add_argument("--write-suite", default=None, metavar="DIR", help="also write the suite measured to DIR")
    c.add_argument(
        "--concurrency", type=bounded(int, 1, 64), default=4, help="judge calls at once (default 4)"
    )
    c.add_argument("--no-swap", action="store_true", help="skip the swapped-pair consistency check")
    c.add_argument("--fresh", action="store_true", help="ask the judge again instead of reading the cache")
    c.add_argument("--out", default=None, help="write the result as JSON here (pairs, accuracy, recall, ...)")
    c.add_argument("--quiet", action="store_true", help="no per-pair progress on stderr")
    c.set_defaults(fn=cmd_calibrate)


def cmd_calibrate(args) -> int:
    from ..calibration.measure import calibrate
    from ..calibration.reviews import current_judge, suite_from_reviews
    from ..calibration.suite import load_suite, write_suite
    from ..errors import InputError
    from ._common import caution, check_model

    if args.review and not args.from_reviews:
        raise InputError("--review needs --from-reviews", hint="Add --from-reviews, or drop --review.")
    if args.from_reviews and args.suite:
        raise InputError("--suite and --from-reviews both name the suite", hint="Keep one of them.")
    store = existing_store(args.db) if args.from_reviews else open_store(args.db)
    suite = suite_from_reviews(store, args.review) if args.from_reviews else load_suite(args.suite)
    if args.judge_model:
        check_model(args.judge_model, "--judge-model", args.api_base)
        spec = model_spec(args.judge_model, args, api_base=args.api_base)
    elif args.from_reviews and current_judge(store, args.review) is not None:
        spec = current_judge(store, args.review)
    else:
        raise InputError(
            "--judge-model is required",
            hint="Name the judge to measure, e.g. --judge-model openai/gpt-4o-mini (with --from-reviews it "
            "defaults to the judge the reviewed runs used).",
        )
    caution(spec, args.quiet)
    if args.write_suite:
        write_suite(suite, args.write_suite)
    done = [0]
    total = len(suite.pairs) + (0 if args.no_swap else sum(1 for p in suite.pairs if p.swap_label))

    def progress(r: dict) -> None:
        done[0] += 1
        if not args.quiet:
            mark = "ok" if r["verdict"] == r["label"] else (r.get("error") and "error") or "MISS"
            print(
                f"[{done[0]}/{total}] {r['id']}{' (swapped)' if r['swapped'] else ''}: {mark}",
                file=sys.stderr,
            )

    cal = calibrate(
        spec,
        samples=args.judge_samples,
        suite=suite,
        store=store,
        concurrency=args.concurrency,
        swap=not args.no_swap,
        fresh=args.fresh,
        on_pair=progress,
    )
    if args.out:
        write_output(args.out, json.dumps(cal.to_json(), indent=2, ensure_ascii=False))
    print_calibration(cal)
    return EXIT_PASS


def _pct(x) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def print_calibration(cal) -> None:
    s = cal.summary
    print(f"judge {cal.judge_model} ({cal.judge_prompt}, {cal.samples} sample(s)) on suite {cal.suite}:")
    print(f"  {cal.headline}")
    for cat, c in s["per_category"].items():
        acc = "n/a" if c["accuracy"] is None else f"{c['accuracy']:.0%}"
        verdicts = ", ".join(f"{v} {n}" for v, n in sorted(c["verdicts"].items()))
        print(f"  {cat:<24} {c['correct']:>3}/{c['judged']:<3} {acc:>5}  ({verdicts})")
    print("  confusion (label → verdict):")
    for label, row in s["confusion"].items():
        print(f"    {label:<22} " + "  ".join(f"{v} {n}" for v, n in row.items()))
    sw = s["swapped"]
    if sw["pairs"]:
        con = "n/a" if sw["consistency"] is None else f"{sw['consistency']:.0%}"
        print(f"  swapped pairs: {sw['consistent']}/{sw['judged']} consistent both ways ({con})")
    pb = s.get("position_bias") or {}
    if pb.get("pairs"):
        rate = "n/a" if pb["flip_rate"] is None else f"{pb['flip_rate']:.0%}"
        print(
            f"  position bias: {pb['flipped']}/{pb['judged']} order-swap pairs changed verdict with the "
            f"candidate's block shown first ({rate})"
        )
    if cal.baselines or cal.learners:
        print(
            "  beside judges and learners that read no behaviour (a judge worth its calls beats them all; "
            "the learners are fitted out of fold, grouped by scenario):"
        )
        rows = [(cal.judge_model, s), *((b["judge_model"], b) for b in cal.baselines)]
        rows += [(f"learner: {m['name']}", m) for m in cal.learners]
        print(f"    {'judge':<28} {'balanced':>9} {'95% CI':>9} {'recall':>7} {'false reg.':>10}")
        for name, f in rows:
            ci = f.get("balanced_accuracy_ci95")
            cells = [
                _pct(f.get(k)) for k in ("balanced_accuracy", "regression_recall", "false_regression_rate")
            ]
            span = f"{ci[0]:.0%}-{ci[1]:.0%}" if ci else ""
            print(f"    {name:<28} {cells[0]:>9} {span:>9} {cells[1]:>7} {cells[2]:>10}")
    if s["errors"]:
        print(f"  {s['errors']} pair(s) got no valid judge reply (in no rate)")
    c = cal.calls
    print(f"  {c['made']} judge calls made, {c['cached']} from cache; stored as calibration {cal.id}")
    print(cal.verdict_line)
