"""`abeq check-set`, `import-set` and `draft-set`: a set's coverage and confirmation, sets from
existing files, sets drafted from the original.

Heavy imports stay inside the commands so `abeq --help` stays instant; the format choices below are
checked against the library's own list by a test.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..sets.importers import ABEQ_FORMATS, BY_NAME, FORMATS, IMPORTERS
from ..vocab import CASE_TYPES
from ._common import (
    EXIT_BAD_INPUT,
    EXIT_PASS,
    bounded,
    caution,
    check_model,
    check_outputs,
    db_arg,
    open_store,
    write_output,
)
from ._settings import CHECK_SET, add_settings

IMPORT_FORMATS = FORMATS  # the importers' names (abeq.sets.importers), then abeq's own formats
OUT_FORMATS = ("json", "yaml", "jsonl", "csv")


def _out_format(path: str) -> str:
    from ..errors import InputError
    from ..sets.parse import format_of

    fmt = format_of(path)
    if fmt not in OUT_FORMATS:
        raise InputError(
            f"cannot write a transfer set as .{fmt}",
            path=path,
            hint="End --out with .json, .yaml, .jsonl or .csv.",
        )
    return fmt


def _summary(ts, cov) -> str:
    types = ", ".join(f"{k} {v}" for k, v in cov.per_type.items())
    return (
        f"{len(ts.cases)} cases ({types}) · coverage {cov.coverage_pct:g}% "
        f"({len(cov.sections_covered)}/{len(cov.sections_identified)} sections)"
    )


def cmd_import_set(args) -> int:
    from ..sets import export_text, import_set

    fmt = _out_format(args.out)  # refuse a bad --out before reading anything
    check_outputs(args, ("--out",))
    ts, warnings = import_set(
        args.source, args.file, default_type=args.default_type, trigger_queries=args.trigger_queries
    )
    write_output(args.out, export_text(ts, fmt))
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    if fmt in ("jsonl", "csv") and (ts.user_confirmed or ts.document_hash):
        print(
            f"warning: .{fmt} keeps only the cases; the confirmation and document hash were not written",
            file=sys.stderr,
        )
    per_type = {t: sum(1 for c in ts.cases if c.type == t) for t in CASE_TYPES}
    carried = [
        f"{n} {what}(s)"
        for what, n in (
            ("assertion", sum(len(c.assertions) for c in ts.cases)),
            ("expectation", sum(len(c.expectations) for c in ts.cases)),
        )
        if n
    ]
    print(
        f"wrote {len(ts.cases)} cases to {args.out} ("
        + ", ".join(f"{k} {v}" for k, v in per_type.items())
        + ")"
        + (f"; {', '.join(carried)}" if carried else "")
        + (
            ""
            if ts.user_confirmed
            else "; not confirmed: check it against the original with `abeq check-set`"
        ),
        file=sys.stderr,
    )
    if not any(c.exercises_sections for c in ts.cases):
        print(
            "note: no case names the sections of the original it exercises, so coverage will read 0% "
            "until you map them (the desk's Transfer set page, “Map cases to sections”, or "
            "exercises_sections in the file)",
            file=sys.stderr,
        )
    return 0


def cmd_draft_set(args) -> int:
    from ..documents import load_document
    from ..sets import coverage, export_text
    from ..sets.drafting import draft
    from ._common import model_spec

    fmt = _out_format(args.out)
    check_outputs(args, ("--out",))
    original = load_document(args.original, "original")
    print_read(original)
    spec = model_spec(args.model, args, "draft", api_base=args.api_base)
    check_model(spec.name, "--model", spec.api_base)
    caution(spec)
    d = draft(original.text, spec)
    write_output(args.out, export_text(d.transfer_set, fmt))
    for w in d.warnings:
        print(f"warning: {w}", file=sys.stderr)
    cov = coverage(original.text, d.transfer_set)
    for w in cov.warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(
        f"drafted {_summary(d.transfer_set, cov)} with {spec.name} ({d.prompt_ref}) into {args.out}. "
        "Nothing runs until a person has reviewed each case and confirmed the set.",
        file=sys.stderr,
    )
    return 0


def register(sub) -> None:
    """Add check-set, import-set and draft-set to the `abeq` subcommands."""
    c = sub.add_parser(
        "check-set",
        help="coverage of a transfer set against the original",
        description="Exit 0 when the set is runnable, 2 when a run would be refused. Counts the cases' "
        "checks and, when --db holds transcripts of the original, warns about a check the original "
        "itself fails.",
    )
    c.add_argument("--original", required=True, help="the document the cases test")
    c.add_argument("--transfer-set", required=True, help="the cases: .json, .yaml, .csv or .jsonl")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.add_argument(
        "--confirm",
        action="store_true",
        help="you have read the cases: write the set back confirmed (frozen, hashed, stamped) so later "
        "runs need no --confirm; a runnable set only (.json or .yaml)",
    )
    db_arg(c)  # where the original's transcripts are, to try each check on them (read, never created)
    # --allow-thin; with --confirm, --trust-code remembers the trust for exactly this code
    add_settings(c, CHECK_SET)
    c.set_defaults(fn=cmd_check_set)

    i = sub.add_parser(
        "import-set",
        help=f"read a transfer set from {', '.join(BY_NAME)} or abeq's own CSV, YAML, JSONL or JSON",
        description="Exit 0 when written, 2 on bad input or when cases have no type. promptfoo tests, "
        "skill-creator evals and other tools' datasets have no case type: the command names the cases that "
        "need one, unless --default-type is given. The output format follows --out.",
    )
    i.add_argument(
        "--from",
        dest="source",
        default="detect",
        choices=("detect", *IMPORT_FORMATS),
        help="the format of FILE (default: detected from its name and content, and said): "
        + "; ".join(f"{i.name}: {i.label}" for i in IMPORTERS)
        + f"; {', '.join(ABEQ_FORMATS)}: abeq's own",
    )
    i.add_argument(
        "file",
        metavar="FILE",
        help="promptfooconfig.yaml or a tests file, evals.json, another tool's dataset, or a set",
    )
    i.add_argument(
        "--out", required=True, help="where to write the set: .json (default shape), .yaml, .jsonl or .csv"
    )
    i.add_argument(
        "--default-type",
        choices=CASE_TYPES,
        default=None,
        help="the type for every case that has none (those cases are marked user-modified)",
    )
    i.add_argument(
        "--trigger-queries",
        action="store_true",
        help="for a skill-creator trigger eval (query + should_trigger): import the queries that should "
        "trigger the skill as case inputs (the others are left out)",
    )
    i.set_defaults(fn=cmd_import_set)

    d = sub.add_parser(
        "draft-set",
        help="draft cases from the original with a model, for a person to review",
        description="Exit 0 when written, 2 on bad input, 3 when the model gave no valid draft. "
        "The set is written unconfirmed, every case 'derived'.",
    )
    d.add_argument("--original", required=True, help="the document to draft cases from")
    d.add_argument(
        "--out", required=True, help="where to write the drafted set (.json, .yaml, .jsonl or .csv)"
    )
    d.add_argument("--model", default=None, help="litellm model string (default: local/smollm2)")
    d.add_argument("--api-base", default=None, help="base URL of an OpenAI-compatible or other server")
    d.add_argument(
        "--timeout",
        type=bounded(float, above=0),
        default=180.0,
        help="seconds before the model call is cut off and retried",
    )
    d.add_argument(
        "--max-tokens",
        type=bounded(int, 1),
        default=None,
        help="reply length limit (default 1200 local, 4096 hosted)",
    )
    d.set_defaults(fn=cmd_draft_set)


def print_read(doc, out=None) -> None:
    """Say which files made the document (an instruction file's @imports), and which were not read."""
    out = out or sys.stderr
    if doc.read:
        print(
            f"read {doc.name} with its imports: {', '.join(doc.read[1:])} — the runner gets them as one "
            "document, and its hash covers them all",
            file=out,
        )
    for n in doc.notes:
        print(f"warning: {n}", file=out)


def files_read(doc_path: str, original, set_path: str, ts) -> list[str]:
    """The original (and each file it imports or its skill folder holds), the set, and every file of
    each case's workspace folder: absolute paths, in the order a run reads them."""
    from ..documents.doc_imports import project_root
    from ..sets import workspace

    doc = Path(doc_path).resolve()
    root = project_root(doc)
    near = [doc.parent / r if (doc.parent / r).is_file() else root / r for r in original.read[1:]]
    out = [doc, *near, *(doc.parent / p for p, _ in original.files), Path(set_path).resolve()]
    base = Path(set_path).resolve().parent
    for c in ts.cases:
        if c.workspace is not None:
            folder = workspace.inside_project(c.workspace, base, c.id, set_path)
            out += [folder / rel for rel in workspace.folder_files(c)]
    return [str(p) for p in dict.fromkeys(p.resolve() for p in out)]


def cmd_check_set(args) -> int:
    from .. import sets
    from ..documents import load_document
    from ..execution.checks.code_trust import trust_on_confirm

    original = load_document(args.original, "original")
    ts = sets.load(args.transfer_set)
    cov = sets.coverage(original.text, ts, allow_thin=args.allow_thin)
    problem = sets.confirmation_problem(ts, original.hash)
    checks, db_note = _check_audit(ts, original.hash, args)
    mutation = _latest_mutation(sets.set_hash(ts), original.hash, args.db)
    if args.json:
        out = cov.as_dict()
        out.update(
            {
                "confirmed": not problem,
                "confirmation": problem or "confirmed",
                "document_hash": original.hash,
                "set_document_hash": ts.document_hash or None,
                "set_hash": sets.set_hash(ts),
                "documents_read": (list(original.read) or [original.name]) + [p for p, _ in original.files],
                "imports_not_read": list(original.notes),
                # every file a run of this set reads, by absolute path: what to review in a set from
                # someone else (docs/security.md)
                "files_read": files_read(args.original, original, args.transfer_set, ts),
                "cases": len(ts.cases),
                "assertions": sum(len(c.assertions) for c in ts.cases),
                "expectations": sum(len(c.expectations) for c in ts.cases),
                "checks": checks.as_dict(),
                # the newest finished `abeq mutate` of this set on this original in --db (or null)
                "mutation": mutation and {k: mutation[k] for k in MUTATION_FIELDS},
            }
        )
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print_read(original, sys.stdout)
        print(
            f"{len(ts.cases)} cases · coverage {cov.coverage_pct:.0f}% "
            f"({len(cov.sections_covered)}/{len(cov.sections_identified)} sections) · "
            + ", ".join(f"{k} {v}" for k, v in cov.per_type.items())
            + f" · {problem or 'confirmed'}"
        )
        print(f"sections: {cov.how}")
        for w in cov.warnings:
            print(f"warning: {w}")
        print(
            f"checks: {checks.cases} of {len(ts.cases)} cases carry {checks.checks} "
            f"({checks.code} run in code, {checks.model} graded by the judge model, {len(checks.skipped)} "
            "skipped)"
            + (
                f"; tried on the original's stored transcripts of {checks.tried_cases} case(s)"
                if db_note == ""
                else ""
            )
        )
        for line in checks.script_lines(args.transfer_set):
            print(line)
        for w in checks.warnings():
            print(f"warning: {w}")
        for p in checks.problems:
            print(f"error: {p}")
        if db_note:
            print(f"note: {db_note}")
        if mutation is not None:
            from ..results.store.mutations import mutation_line

            print(f"mutation score: {mutation_line(mutation)}")
    if checks.problems:
        from ..errors import InputError

        raise InputError(
            f"{len(checks.problems)} check(s) cannot be evaluated; a run would refuse this set",
            path=args.transfer_set,
            hint="Fix the checks named above (assertions of the cases).",
        )
    if args.confirm:
        from ..errors import InputError
        from ..execution.preflight import confirm_for_runs

        if args.transfer_set.startswith("git:"):
            raise InputError(
                "a set read at a git revision cannot be confirmed in place",
                path=args.transfer_set,
                hint="Confirm the file in your checkout (--transfer-set PATH; --original may stay "
                "git:REV:PATH), then commit it.",
            )
        # what the desk's Confirm accepts, the same function: refused when a run would refuse the set
        done = confirm_for_runs(
            ts, original.text, original.hash, allow_thin=args.allow_thin, path=args.transfer_set
        )
        if sets.format_of(args.transfer_set) not in ("json", "yaml"):
            raise InputError(
                "a confirmation cannot be written into this format (it keeps only the cases)",
                path=args.transfer_set,
                hint="Convert it with `abeq import-set … --out set.json` first.",
            )
        write_output(args.transfer_set, sets.export_text(done, sets.format_of(args.transfer_set)))
        if said := trust_on_confirm(ts, args.transfer_set, args.trust_code):
            print(said, file=sys.stderr)
        print(
            f"confirmed: {args.transfer_set} (set {sets.set_hash(done)[:12]}, "
            f"{done.confirmation_timestamp}); "
            "runs on this original need no --confirm until a case changes",
            file=sys.stderr,
        )
    return EXIT_PASS if cov.runnable else EXIT_BAD_INPUT


MUTATION_FIELDS = ("id", "score", "killed", "mutants", "runner_model", "judge_model", "finished_at")


def _latest_mutation(ts_hash: str, original_hash: str, db: str | None) -> dict | None:
    """The newest finished mutation test of the set in the database, when it exists (never created)."""
    from ..results.store.store import exists

    if not exists(db):
        return None
    store = open_store(db)
    try:
        return store.mutations.latest(ts_hash, original_hash)
    finally:
        store.close()


def _check_audit(ts, original_hash: str, args):
    """The set's checks, tried on the original's stored transcripts when the database exists (it is
    never created here); the note says why they were not tried. The set's own code is tried only
    when trusted (--trust-code, or remembered)."""
    from functools import partial

    from ..execution.checks.check_audit import audit
    from ..execution.checks.scripts import Sandbox
    from ..results.store.store import db_path
    from ..results.store.store import exists as store_exists

    check = partial(
        audit,
        set_path=args.transfer_set,
        trust_code=args.trust_code,
        sandbox=Sandbox(env_names=tuple(args.check_env), unsandboxed=args.unsandboxed),
    )
    if not any(c.assertions or c.expectations for c in ts.cases):
        return check(ts), None
    if not store_exists(args.db):
        note = f"no database at {db_path(args.db)}: the checks were not tried on the original's transcripts"
        return check(ts), note
    store = open_store(args.db)
    try:
        return check(ts, store, original_hash), ""
    finally:
        store.close()
