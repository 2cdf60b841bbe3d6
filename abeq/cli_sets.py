"""`abeq import-set` and `abeq draft-set`: transfer sets from existing files or drafted from the original.

Heavy imports stay inside the commands so `abeq --help` stays instant; the choices below are
checked against the library's own lists by a test.
"""

from __future__ import annotations

import sys

IMPORT_FORMATS = ("promptfoo", "skill-creator", "csv", "yaml", "jsonl", "json")
CASE_TYPES = ("happy", "edge", "adversarial", "composition")
OUT_FORMATS = ("json", "yaml", "jsonl", "csv")


def _out_format(path: str) -> str:
    from .errors import InputError
    from .transferset import format_of

    fmt = format_of(path)
    if fmt not in OUT_FORMATS:
        raise InputError(f"cannot write a transfer set as .{fmt}", path=path, hint="End --out with .json, .yaml, .jsonl or .csv.")
    return fmt


def _summary(ts, cov) -> str:
    types = ", ".join(f"{k} {v}" for k, v in cov.per_type.items())
    return (f"{len(ts.cases)} cases ({types}) · coverage {cov.coverage_pct:g}% "
            f"({len(cov.sections_covered)}/{len(cov.sections_identified)} sections)")


def cmd_import_set(args) -> int:
    from .importers import export_text, import_set

    from .cli import check_outputs, write_output

    fmt = _out_format(args.out)  # refuse a bad --out before reading anything
    check_outputs(args, ("--out",))
    ts, warnings = import_set(args.source, args.file, default_type=args.default_type)
    write_output(args.out, export_text(ts, fmt))
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    if fmt in ("jsonl", "csv") and (ts.user_confirmed or ts.document_hash):
        print(f"warning: .{fmt} keeps only the cases; the confirmation and document hash were not written",
              file=sys.stderr)
    per_type = {t: sum(1 for c in ts.cases if c.type == t) for t in CASE_TYPES}
    print(f"wrote {len(ts.cases)} cases to {args.out} ("
          + ", ".join(f"{k} {v}" for k, v in per_type.items()) + ")"
          + ("" if ts.user_confirmed else "; not confirmed: check it against the original with `abeq check-set`"),
          file=sys.stderr)
    return 0


def cmd_draft_set(args) -> int:
    from .documents import load_document
    from .drafting import draft
    from .importers import export_text
    from .models import DEFAULT_MODEL, ModelSpec
    from .transferset import coverage

    from .cli import check_model, check_outputs, write_output

    fmt = _out_format(args.out)
    check_outputs(args, ("--out",))
    original = load_document(args.original, "original")
    name = args.model or DEFAULT_MODEL
    check_model(name, "--model", args.api_base)
    max_tokens = args.max_tokens or (1200 if name.startswith("local/") else 4096)
    spec = ModelSpec(name=name, api_base=args.api_base, timeout=args.timeout, max_tokens=max_tokens)
    if name.startswith("local/"):
        print("note: the embedded model is tiny (135M); its drafts are a placeholder to edit, not a test plan. "
              "Use --model with a stronger model.", file=sys.stderr)
    d = draft(original.text, spec)
    write_output(args.out, export_text(d.transfer_set, fmt))
    for w in d.warnings:
        print(f"warning: {w}", file=sys.stderr)
    cov = coverage(original.text, d.transfer_set)
    for w in cov.warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(f"drafted {_summary(d.transfer_set, cov)} with {spec.name} ({d.prompt_ref}) into {args.out}. "
          "Nothing runs until a person has reviewed each case and confirmed the set.", file=sys.stderr)
    return 0


def register(sub) -> None:
    """Add import-set and draft-set to the `abeq` subcommands."""
    from .cli import bounded

    i = sub.add_parser("import-set", help="read a transfer set from promptfoo, skill-creator, CSV, YAML, JSONL or JSON",
                       description="Exit 0 when written, 2 on bad input or when cases have no type. promptfoo tests "
                                   "and skill-creator evals have no case type: the command names the cases that "
                                   "need one, unless --default-type is given. The output format follows --out.")
    i.add_argument("--from", dest="source", required=True, choices=IMPORT_FORMATS, help="the format of FILE")
    i.add_argument("file", metavar="FILE", help="promptfooconfig.yaml or a tests file, evals.json, or a set")
    i.add_argument("--out", required=True, help="where to write the set: .json (default shape), .yaml, .jsonl or .csv")
    i.add_argument("--default-type", choices=CASE_TYPES, default=None,
                   help="the type for every case that has none (those cases are marked user-modified)")
    i.set_defaults(fn=cmd_import_set)

    d = sub.add_parser("draft-set", help="draft cases from the original with a model, for a person to review",
                       description="Exit 0 when written, 2 on bad input, 3 when the model gave no valid draft. "
                                   "The set is written unconfirmed, every case 'derived'.")
    d.add_argument("--original", required=True, help="the document to draft cases from")
    d.add_argument("--out", required=True, help="where to write the drafted set (.json, .yaml, .jsonl or .csv)")
    d.add_argument("--model", default=None, help="litellm model string (default: local/smollm2)")
    d.add_argument("--api-base", default=None, help="base URL of an OpenAI-compatible or other server")
    d.add_argument("--timeout", type=bounded(float, above=0), default=180.0, help="seconds before the model call is cut off and retried")
    d.add_argument("--max-tokens", type=bounded(int, 1), default=None, help="reply length limit (default 1200 local, 4096 hosted)")
    d.set_defaults(fn=cmd_draft_set)


__all__ = ["register"]
