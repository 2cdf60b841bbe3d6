"""`abeq compare`: the blind comparator on two files. Heavy imports stay in the command."""

from __future__ import annotations

import argparse
import json
import sys

from ._common import bounded, check_model, check_outputs, model_spec, write_output

DESCRIPTION = (
    "Which of two outputs does the task better? The judge sees them only as A and B, with origin "
    "labels stripped, and judges both orders (A/B, then B/A); a winner is declared only when the same "
    "output wins both, otherwise a tie marked order_dependent. In comparison.json, A/a is --a and B/b "
    "is --b. Overall = 0.6 x content + 0.4 x structure: abeq's weighting (the upstream comparator "
    "averages the two); change it with --content-weight. "
    "Exit codes: 0 compared, 2 bad input, 3 the judge gave no valid judgement."
)


def register(sub) -> None:
    c = sub.add_parser(
        "compare",
        help="blind A/B comparison of two outputs for a task, judged in both orders",
        description=DESCRIPTION,
    )
    c.add_argument("--task", required=True, help="file with the task both outputs answer")
    c.add_argument("--a", required=True, help="file with the first output")
    c.add_argument("--b", required=True, help="file with the second output")
    c.add_argument(
        "--assertions",
        default=None,
        help='JSON file: a list of strings, or of {"id", "text"}, each checked PASS/FAIL per output',
    )
    c.add_argument(
        "--model", default=None, help="litellm model string for the judge (default: local/smollm2)"
    )
    c.add_argument("--api-base", default=None, help="base URL of an OpenAI-compatible or other server")
    c.add_argument(
        "--timeout",
        type=bounded(float, above=0),
        default=120.0,
        help="seconds before a model call is cut off and retried",
    )
    c.add_argument("--max-tokens", type=bounded(int, 1), default=None, help="reply length limit per call")
    c.add_argument(
        "--seed", type=int, default=None, help="decides which output is shown as A first (recorded)"
    )
    c.add_argument(
        "--content-weight",
        type=bounded(float, 0, 1),
        default=0.6,
        help="share of content in overall; structure gets the rest (default 0.6)",
    )
    c.add_argument("--out", default=None, help="write comparison.json here (default: stdout)")
    c.add_argument("--quiet", action="store_true", help="no summary on stderr")
    c.set_defaults(fn=cmd_compare)


def _assertions(path: str | None):
    from ..comparator.scoring import read_assertions

    return read_assertions(path) if path else None


def cmd_compare(args: argparse.Namespace) -> int:
    from ..comparator.comparator import Weights, compare
    from ..documents import read_text_file

    check_outputs(args, ("--out",))
    spec = model_spec(args.model, args, "compare", api_base=args.api_base)
    check_model(spec.name, "--model", spec.api_base)
    task = read_text_file(args.task, what="task")
    a = read_text_file(args.a, what="output a")
    b = read_text_file(args.b, what="output b")
    assertions = _assertions(args.assertions)
    weights = Weights(content=args.content_weight, structure=round(1 - args.content_weight, 10))
    result = compare(
        task, a, b, assertions, spec, args.seed, weights=weights, labels={"a": args.a, "b": args.b}
    )
    write_output(args.out, json.dumps(result.model_dump(), indent=2, ensure_ascii=False))
    if not args.quiet:
        t = result.weighted_totals
        who = {"A": f"A ({args.a})", "B": f"B ({args.b})", "tie": "tie"}[result.winner]
        print(
            f"winner: {who}{' · order-dependent' if result.order_dependent else ''} · overall a "
            f"{t.a.overall} / "
            f"b {t.b.overall} · seed {result.seed}",
            file=sys.stderr,
        )
    return 0
