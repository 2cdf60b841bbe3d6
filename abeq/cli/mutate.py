"""`abeq mutate`: would this transfer set (and its judge) notice a loss? Mutation testing of the set."""

from __future__ import annotations

import json
import sys

from ..vocab import FINISHED
from ._common import (
    EXIT_BAD_INPUT,
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_PASS,
    EXIT_REGRESSED,
    bounded,
    caution,
    db_arg,
    write_output,
)
from ._settings import MUTATE, add_settings, run_settings

# where a setting means more for a mutation test than for a run
HELP = {
    "concurrency": "model calls in flight; a mutant starts this many cases at once, so at 1 a killed mutant "
    "costs about one case's calls",
    "aa": "replay the original once: mark kills within the judge's noise",
    "judge_samples": "judge each case K times (1-9)",
}


def register(sub) -> None:
    r = sub.add_parser(
        "mutate",
        help="mutation-test a transfer set: delete each section of the original; does the set notice?",
        description="Each mutant is the original with one section deleted (or, with --model-mutants, one "
        "behaviour a model weakened or removed), run like a candidate against the original's cached runs. "
        "Exit codes: 0 done (or score at or above --min-score), 1 score below "
        "--min-score, 2 bad input, 3 incomplete (a mutant errored), 4 an unexpected error, 130 interrupted.",
    )
    r.add_argument("--original", required=True, help="the document whose sections are deleted")
    r.add_argument("--transfer-set", required=True, help="cases: .json, .yaml, .csv or .jsonl")
    add_settings(r, MUTATE, help=HELP)  # a run's settings, from the one table (abeq.execution.options)
    db_arg(r)
    r.add_argument("--confirm", action="store_true", help="accept the transfer set (as for run)")
    r.add_argument("--all-cases", action="store_true", help="run every case on every mutant (the full map)")
    r.add_argument(
        "--max-mutants", type=bounded(int, 1), default=None, help="test only the first N section mutants"
    )
    r.add_argument(
        "--section",
        action="append",
        default=None,
        metavar="NAME",
        help="test only this section's mutant (repeat for more; matched as a case's exercises_sections)",
    )
    r.add_argument(
        "--model-mutants",
        type=bounded(int, 0),
        default=0,
        metavar="N",
        help="also have a model write N subtler mutants (one behaviour weakened or removed each); one "
        "call, cached",
    )
    r.add_argument(
        "--mutant-model",
        default=None,
        help="litellm model string that writes --model-mutants (default: the runner model), on --api-base",
    )
    r.add_argument(
        "--min-score",
        type=bounded(float, 0, 1),
        default=None,
        help="exit 1 when the score (killed / mutants, 0-1) is below this (for CI)",
    )
    r.add_argument("--out", default=None, help="write the report (JSON) here (default: stdout)")
    r.add_argument("--markdown", default=None, help="write a Markdown report here")
    r.add_argument("--quiet", action="store_true", help="no progress or table on stderr")
    r.set_defaults(fn=cmd_mutate)


def cmd_mutate(args) -> int:
    from .run import stoppable

    return stoppable(_mutate, args)


def _mutate(args, stop) -> int:
    from ..mutation.estimate import describe_mutation_estimate
    from ..mutation.render import headline, markdown, table
    from ..mutation.run import prepare_mutation
    from ._progress import Bar

    settings = run_settings(args, MUTATE)
    writer = (
        settings.model(args.mutant_model, "draft", api_base=settings.api_base) if args.mutant_model else None
    )
    prep = prepare_mutation(
        args.original,
        args.transfer_set,
        store=args.db,
        confirm=args.confirm,
        all_cases=args.all_cases,
        max_mutants=args.max_mutants,
        sections=args.section,
        model_mutants=args.model_mutants,
        mutant_model=writer,
        settings=settings,
    )
    try:
        for w in prep.warnings:
            print(f"warning: {w}", file=sys.stderr)
        if prep.cfg.mode.kind != "command":
            caution(prep.cfg.runner, args.quiet)
        if prep.cfg.judge.name != prep.cfg.runner.name:
            caution(prep.cfg.judge, args.quiet)
        if not args.quiet:
            print(describe_mutation_estimate(prep.estimate(), args.all_cases), file=sys.stderr)
        bars: dict[int, Bar] = {}

        def progress(p: dict) -> None:
            if p["mutant"] not in bars and not args.quiet:
                print(f"mutant {p['mutant']}/{p['mutants']}: without {p['label']}", file=sys.stderr)
            bars.setdefault(p["mutant"], Bar(args.quiet))(p)

        rep = prep.run(on_progress=progress, cancel=stop)
    finally:
        for bar in bars.values():
            bar.close()
        prep.store.close()
    if stop.is_set() and rep.report.get("status") != FINISHED:
        print("\nabeq: mutation test interrupted; what finished is kept. Run the same command again to "
              "resume it.", file=sys.stderr)  # fmt: skip
        return EXIT_INTERRUPTED
    write_output(args.out, json.dumps(rep.report, indent=2, ensure_ascii=False))
    if args.markdown:
        write_output(args.markdown, markdown(rep.report))
    if not args.quiet:
        print(table(rep.report), file=sys.stderr)
        print(headline(rep.report), file=sys.stderr)
    if rep.incomplete:
        print(f"incomplete: {', '.join(rep.incomplete)} (errors; the same command resumes)", file=sys.stderr)
        return EXIT_INCOMPLETE
    if args.min_score is not None and rep.score < args.min_score:
        print(f"mutation score {rep.score:.2f} is below --min-score {args.min_score:g}", file=sys.stderr)
        return EXIT_REGRESSED
    return EXIT_PASS


__all__ = ["register", "cmd_mutate", "EXIT_BAD_INPUT"]
