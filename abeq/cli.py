"""The `abeq` command line. Heavy imports stay inside the commands so `abeq --help` is instant."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

EXIT_PASS, EXIT_REGRESSED, EXIT_BAD_INPUT, EXIT_INCOMPLETE = 0, 1, 2, 3


def bounded(kind, lo=None, hi=None, *, above=None):
    """An argparse `type=` that refuses values out of range, so argparse names the option and exits 2."""
    import math

    def parse(text: str):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'a whole number' if kind is int else 'a number'}, got {text!r}") from None
        if (kind is float and not math.isfinite(v)) or (above is not None and not v > above) \
                or (lo is not None and v < lo) or (hi is not None and v > hi):
            want = (f"greater than {above:g}" if above is not None else f"from {lo} to {hi}" if hi is not None
                    else f"{lo} or more")
            raise argparse.ArgumentTypeError(f"must be {want}, got {text}")
        return v

    parse.__name__ = kind.__name__
    return parse


def _model_args(p: argparse.ArgumentParser, *, runner: bool = True) -> None:
    if runner:
        p.add_argument("--runner-model", default=None, help="litellm model string for the runner (default: local/smollm2)")
    p.add_argument("--judge-model", default=None, help="litellm model string for the judge (default: the runner model)")
    p.add_argument("--api-base", default=None, help="base URL of an OpenAI-compatible or other server"
                   + (" (the runner's; the judge's too unless --judge-api-base)" if runner else ""))
    if runner:
        p.add_argument("--judge-api-base", default=None,
                       help="the judge's server when it differs from the runner's (e.g. a hosted runner, a local judge)")
    p.add_argument("--timeout", type=bounded(float, above=0), default=120.0,
                   help="seconds before a model call is cut off and retried")
    p.add_argument("--max-retries", type=bounded(int, 0), default=4,
                   help="retries of a call after a rate limit, server error or timeout (default 4)")
    p.add_argument("--max-tokens", type=bounded(int, 1), default=None, help="reply length limit per call")
    p.add_argument("--db", default=None, help="sqlite file (default: $ABEQ_DB or ./abeq.db)")


def _spec(name, args, api_base=None):
    from .models import DEFAULT_MODEL, ModelSpec

    name = name or DEFAULT_MODEL
    max_tokens = args.max_tokens or (700 if name.startswith("local/") else 2048)
    return ModelSpec(name=name, api_base=api_base, timeout=args.timeout, max_tokens=max_tokens)


class _Bar:
    """A one-line progress bar on stderr (cases done / total, cached hits, errors)."""

    def __init__(self, quiet: bool):
        self.quiet = quiet or not sys.stderr

    def __call__(self, p: dict) -> None:
        if self.quiet:
            return
        total = max(1, p["total"])
        width = 24
        fill = int(width * p["done"] / total)
        sys.stderr.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {p['done']}/{p['total']} cases"
                         f" · {p['cached']} cached · {p['calls']} calls · {p['errors']} errors · {p['elapsed']:.0f}s ")
        if p["done"] == p["total"]:
            sys.stderr.write("\n")
        sys.stderr.flush()


def write_output(path: str | None, text: str) -> None:
    """stdout for no path or "-"; otherwise the whole file or nothing: a temporary file beside it,
    then one rename (an interrupted write never leaves half an export)."""
    import tempfile

    if not path or path == "-":
        sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))
        return
    import stat

    target = Path(os.path.realpath(path))  # write through a symlink, not over it
    if target.exists() and not target.is_file():  # /dev/null, /dev/stdout, a FIFO: written in place
        with open(target, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        return
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        # mkstemp makes the file 0600; give it the mode a plain open() would (or the file's own)
        if target.exists():
            mode = stat.S_IMODE(target.stat().st_mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


OUTPUT_OPTIONS = ("--out", "--record", "--markdown", "--csv", "--junit")


def check_outputs(args, flags=OUTPUT_OPTIONS) -> None:
    """Refuse an output path that cannot be written, before any model call or export is made."""
    from .errors import InputError

    for flag in flags:
        path = getattr(args, flag.lstrip("-").replace("-", "_"), None)
        if not path or path == "-":
            continue
        target, hint = Path(os.path.realpath(path)), f"Create the folder first, or pick another {flag}."
        if target.is_dir():
            raise InputError(f"{flag} is a folder; give a file name", path=path, hint=f"e.g. {flag} {target / 'report'}")
        if target.exists() and not target.is_file():  # a device or FIFO is written in place
            if not os.access(target, os.W_OK):
                raise InputError(f"cannot write {flag}", path=path, hint=f"Pick another {flag}.")
            continue
        folder = target.parent
        if not folder.is_dir():
            raise InputError(f"cannot write {flag}: the folder {folder} does not exist", path=path, hint=hint)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise InputError(f"cannot write {flag}: the folder {folder} is not writable", path=path,
                             hint=f"Pick another {flag}, or fix the folder's permissions.")


def check_model(name: str, option: str, api_base: str | None = None) -> None:
    """Refuse a model string no provider can serve, before a run (or anything in the database) starts."""
    from .errors import InputError
    from .models import model_problem

    problem = model_problem(name, api_base)
    if problem:
        hint = ("Use local/smollm2 or local/<path to an existing .gguf file>." if name.startswith("local/") else
                "Write it as provider/model (e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
                "ollama/llama3), or local/smollm2.")
        raise InputError(f"{option} {name}: {problem}", hint=hint)


# sqlite's words for "this path cannot hold an abeq database" (as opposed to a bug in abeq)
_BAD_DB = {"SQLITE_NOTADB", "SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PERM", "SQLITE_CORRUPT", "SQLITE_IOERR",
           "SQLITE_AUTH"}
_BAD_DB_TEXT = ("not a database", "unable to open", "readonly", "malformed", "disk i/o error")


def open_store(db):
    """The Store at --db, or an InputError naming the path when it cannot be a database."""
    import sqlite3

    from .errors import InputError
    from .store import Store, db_path

    path = db_path(db)
    hint = "Point --db (or $ABEQ_DB) at an abeq database, or at a new file in a folder you can write."
    if Path(path).is_dir():
        raise InputError("--db is a folder, not a database file", path=path, hint=hint)
    if Path(path).exists() and not os.access(path, os.R_OK | os.W_OK):
        raise InputError("cannot read and write this database file", path=path, hint=hint)
    folder = Path(path).parent
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):  # sqlite writes its -wal/-shm files here
        raise InputError(f"the database's folder {folder} is not writable", path=path, hint=hint)
    try:
        return Store(db)
    except OSError as e:  # its folder could not be created
        raise InputError(f"cannot create the database's folder ({e.strerror or e}: {e.filename})", path=path,
                         hint=hint) from None
    except sqlite3.DatabaseError as e:
        name, text = getattr(e, "sqlite_errorname", None), str(e).lower()
        if name in _BAD_DB or (name is None and any(t in text for t in _BAD_DB_TEXT)):
            raise InputError(f"cannot use this file as the database ({e})", path=path, hint=hint) from None
        raise


def cmd_run(args) -> int:
    from .documents import detect_variant, load_document
    from .engine import Engine, RunConfig, estimate
    from .report import build_report, exit_code
    from . import transferset as tsm

    original = load_document(args.original, "original")
    candidate = load_document(args.candidate, "candidate")
    ts = tsm.load(args.transfer_set)
    variant = args.variant or detect_variant(args.original)
    problem = tsm.confirmation_problem(ts, original.hash)
    if problem:
        if not args.confirm:
            from .errors import NotConfirmedError

            raise NotConfirmedError(f"{problem}: no runner call happens before a person accepts it",
                                    path=args.transfer_set,
                                    hint="Review the cases (abeq check-set), then re-run with --confirm to accept them.")
        ts = tsm.confirm(ts, original.hash, thin_accepted=args.allow_thin or None)
    cov = tsm.require_runnable(original.text, ts, args.allow_thin, args.transfer_set)
    for w in cov.warnings:
        print(f"warning: {w}", file=sys.stderr)
    runner = _spec(args.runner_model, args, args.api_base)
    judge = _spec(args.judge_model or args.runner_model, args, args.judge_api_base or args.api_base)
    cfg = RunConfig(runner=runner, judge=judge, variant=variant, concurrency=args.concurrency, fresh=args.fresh,
                    judge_samples=args.judge_samples, aa=args.aa, allow_thin=args.allow_thin, review=args.review,
                    max_retries=args.max_retries)
    # Everything that would fail after the model calls is refused now, with nothing stored.
    check_outputs(args)
    check_model(runner.name, "--runner-model", runner.api_base)
    if judge.name != runner.name:
        check_model(judge.name, "--judge-model", judge.api_base)
    if runner.name.startswith("local/") and not args.quiet:
        print("note: the embedded model is tiny (135M); its verdicts are for trying abeq, not for decisions. "
              "Use --runner-model/--judge-model with a stronger model.", file=sys.stderr)
    store = open_store(args.db)
    eng = Engine(store, original, candidate, ts, cfg, on_progress=_Bar(args.quiet))
    run_id = eng.prepare()
    if not args.quiet:
        rnd = (store.run(run_id) or {}).get("round") or 1
        est = estimate(eng, rounds_so_far=rnd - 1)
        cost = "unpriced model" if est["est_cost"] is None else f"~${est['est_cost']:.4f}"
        print(f"run {run_id}: {len(ts.cases)} cases, variant {variant}, round {rnd}. Budget: at most "
              f"{est['runner_calls']} runner calls ({est['teacher_cached']} teacher runs cached) + "
              f"{est['judge_calls']} judge calls, ~{est['est_prompt_tokens'] + est['est_completion_tokens']:,} "
              f"tokens (est.), {cost}; the review so far: N x (1 + rounds) = "
              f"{est['review_budget_runner_calls']} runner calls", file=sys.stderr)
    eng.run()
    rr = build_report(store, run_id)
    gate = args.gate
    write_exports(store, rr, args, gate)
    write_output(args.out, json.dumps(rr.with_errors(), indent=2, ensure_ascii=False))
    if not args.quiet:
        print_outcome(store, rr, gate)
    else:
        print_errors(rr)  # quiet drops progress and the summary, never the errors
    return exit_code(rr, gate)


def write_exports(store, rr, args, gate: str) -> None:
    from .exports import markdown, to_csv, to_junit
    from .report import run_record

    if getattr(args, "record", None):
        write_output(args.record, json.dumps(run_record(store, rr, gate), indent=2, ensure_ascii=False))
    if getattr(args, "markdown", None):
        write_output(args.markdown, markdown(store, rr, gate))
    if getattr(args, "csv", None):
        write_output(args.csv, to_csv(rr))
    if getattr(args, "junit", None):
        write_output(args.junit, to_junit(rr, gate))


def print_outcome(store, rr, gate: str) -> None:
    from .agreement import aa_rates
    from .report import gate_result

    st = store.call_stats(rr.run["id"])
    s = rr.report["summary"]
    g = gate_result(rr, gate)
    cost = "unknown cost" if st["unpriced"] else f"${st['cost']:.4f}"
    print(f"{'PASS' if g['pass'] else 'FAIL'} ({gate}): {s['equivalents']} equivalent, {s['divergences']} diverged, "
          f"{s['regressions']} regressed, {len(rr.errors)} errored"
          + (f", {rr.overridden} overridden" if rr.overridden else "")
          + f" · {st['made']} calls made ({st['teacher_made']} teacher), {st['cached']} from cache · "
          f"{st['prompt_tokens'] + st['completion_tokens']} tokens · {cost}", file=sys.stderr)
    if gate == "directive-clarity":
        print(f"directness: original {g['mean_original_directness']} → candidate {g['mean_candidate_directness']}; "
              "per case: " + ", ".join(f"{k} {v:+d}" for k, v in g["per_case_delta"].items()), file=sys.stderr)
    truncated = [r.case_id for r in rr.rows if r.gate_truncated]
    if truncated:
        print(f"gate-truncated (stopped at a gate with no scripted answer; judged up to it): {', '.join(truncated)}",
              file=sys.stderr)
    uncertain = [r.case_id for r in rr.rows if r.uncertain]
    if uncertain:
        print(f"uncertain (judge samples disagree): {', '.join(uncertain)}", file=sys.stderr)
    for a in aa_rates(store, rr.run["id"]):
        print(f"A/A false-regression rate: {a['false_regression_rate']:.0%} of {a['cases']} cases "
              f"({a['runner_model']} / {a['judge_model']})", file=sys.stderr)
    print_errors(rr)


def print_errors(rr) -> None:
    """One stderr line per errored case."""
    for e in rr.errors:
        print(f"error: case {e['case_id']} ({e['stage']}): {e['error'][:200]}", file=sys.stderr)


def _existing_store(db):
    from .errors import InputError
    from .store import db_path

    if not Path(db_path(db)).exists():
        raise InputError("no database here", path=db_path(db), hint="Pass --db, or run `abeq run` first.")
    return open_store(db)


def cmd_history(args) -> int:
    from .errors import InputError
    from .history import review_history

    store = _existing_store(args.db)
    if store.review(args.name) is None:
        names = ", ".join(r["name"] for r in store.reviews()) or "none yet"
        raise InputError(f"no review named '{args.name}'", hint=f"Reviews in this database: {names}.")
    rounds = review_history(store, args.name)
    if args.json:
        print(json.dumps(rounds, indent=2))
        return EXIT_PASS
    print(f"{'round':>5}  {'run':>4}  {'chars':>6}  {'tokens':>6}  {'lines':>5}  {'ratio':>6}  {'equiv':>5}  {'div':>4}"
          f"  {'regr':>4}  {'err':>4}  {'ovr':>4}  {'dir o→c':>9}  candidate")
    for r in rounds:
        d = f"{r['directness original']}→{r['directness candidate']}" if r["directness original"] else "-"
        print(f"{r['round'] or '-':>5}  {r['run']:>4}  {r['characters']:>6}  {r['tokens (est.)']:>6}  "
              f"{r['lines']:>5}  {r['compression']:>6}  "
              f"{r['equivalent']:>5}  {r['diverged']:>4}  {r['regressed']:>4}  {r['errored']:>4}  "
              f"{r['overridden']:>4}  {d:>9}  {r['candidate']}")
    return EXIT_PASS


def cmd_stats(args) -> int:
    from .agreement import aa_rates, judge_agreement

    store = _existing_store(args.db)
    agree, aa = judge_agreement(store), aa_rates(store)
    if args.json:
        print(json.dumps({"judge_agreement": agree, "aa": aa}, indent=2))
        return EXIT_PASS
    print("judge agreement with reviewers:" if agree else "no reviewed cases yet (overrides count as reviews)")
    for a in agree:
        k = "n/a" if a["kappa"] is None else f"{a['kappa']:.2f}"
        print(f"  {a['judge_model']}: {a['reviewed']} reviewed, raw agreement {a['raw_agreement']:.0%}, "
              f"Cohen's kappa {k}" + (f" ({a['note']})" if a["note"] else ""))
    for a in aa:
        print(f"A/A false-regression rate {a['runner_model']} / {a['judge_model']}: "
              f"{a['false_regression_rate']:.0%} of {a['cases']} cases ({a['noisy_cases']} noisy)")
    return EXIT_PASS


def cmd_export(args) -> int:
    from .errors import InputError
    from .report import build_report

    check_outputs(args)  # before any file is written: all of them or none
    store = _existing_store(args.db)
    if store.run(args.run_id) is None:
        raise InputError(f"no run {args.run_id} in this database", path=store.path)
    rr = build_report(store, args.run_id)
    write_exports(store, rr, args, args.gate)
    if args.out or not any((args.record, args.markdown, args.csv, args.junit)):
        write_output(args.out, json.dumps(rr.with_errors(), indent=2, ensure_ascii=False))
    return EXIT_PASS


def cmd_override(args) -> int:
    from .errors import InputError
    from .report import build_report

    store = _existing_store(args.db)
    if store.run(args.run_id) is None:
        raise InputError(f"no run {args.run_id} in this database", path=store.path)
    rows = {r.case_id: r for r in build_report(store, args.run_id).rows}
    if args.case_id not in rows:
        raise InputError(f"run {args.run_id} has no case '{args.case_id}'")
    if rows[args.case_id].status != "judged":
        raise InputError(f"case '{args.case_id}' errored: there is no verdict to override; re-run it")
    store.add_override(args.run_id, args.case_id, args.verdict, args.reason, args.reviewer,
                       rows[args.case_id].judge_verdict)
    rr = build_report(store, args.run_id)
    print(f"recorded; run {args.run_id} now {'PASSES' if rr.passed else 'FAILS'} with {rr.overridden} override(s)")
    return EXIT_PASS


def cmd_check_set(args) -> int:
    from .documents import load_document
    from . import transferset as tsm

    original = load_document(args.original, "original")
    ts = tsm.load(args.transfer_set)
    cov = tsm.coverage(original.text, ts, allow_thin=args.allow_thin)
    if args.json:
        print(json.dumps(cov.as_dict(), indent=2, ensure_ascii=False))
    else:
        print(f"{len(ts.cases)} cases · coverage {cov.coverage_pct:.0f}% "
              f"({len(cov.sections_covered)}/{len(cov.sections_identified)} sections) · "
              + ", ".join(f"{k} {v}" for k, v in cov.per_type.items())
              + f" · {tsm.confirmation_problem(ts, original.hash) or 'confirmed'}")
        for w in cov.warnings:
            print(f"warning: {w}")
    if args.confirm:
        from .errors import InputError

        if not cov.runnable:
            raise InputError("not confirmed: a run would refuse this set", path=args.transfer_set,
                             hint="Add cases, or accept a thin set explicitly with --allow-thin.")
        if tsm.format_of(args.transfer_set) not in ("json", "yaml"):
            raise InputError("a confirmation cannot be written into this format (it keeps only the cases)",
                             path=args.transfer_set, hint="Convert it with `abeq import-set … --out set.json` first.")
        from .importers import export_text

        done = tsm.confirm(ts, original.hash, thin_accepted=(args.allow_thin and cov.thin) or None)
        write_output(args.transfer_set, export_text(done, tsm.format_of(args.transfer_set)))
        print(f"confirmed: {args.transfer_set} (set {tsm.set_hash(done)[:12]}, {done.confirmation_timestamp}); "
              "runs on this original need no --confirm until a case changes", file=sys.stderr)
    return EXIT_PASS if cov.runnable else EXIT_BAD_INPUT


def cmd_app(args) -> int:
    import subprocess

    app = Path(__file__).resolve().parent.parent / "app.py"
    if not app.exists():
        from .errors import InputError

        raise InputError("the review desk (app.py) is not in this installation", hint="Run from a checkout of abeq.")
    env = dict(os.environ)
    if args.db:
        env["ABEQ_DB"] = str(Path(args.db).resolve())
    cmd = [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(args.port),
           "--server.address", args.address, "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    return subprocess.call(cmd, env=env, cwd=str(app.parent))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="abeq", description="Does a rewritten prompt, skill or instruction file still "
                                "make the model do what the original did? A/B behavioural-equivalence runs.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser("run", help="run original and candidate over a transfer set and judge each case",
                       description="Exit codes: 0 pass, 1 a case regressed, 2 bad input, 3 a case errored.")
    r.add_argument("--original", required=True, help="the teacher document")
    r.add_argument("--candidate", required=True, help="the rewritten document under test")
    r.add_argument("--transfer-set", required=True, help="cases: .json, .yaml, .csv or .jsonl")
    _model_args(r)
    r.add_argument("--variant", choices=["skill", "instruction-file"], default=None,
                   help="runner variant (default: detected from the original's file name)")
    r.add_argument("--concurrency", type=bounded(int, 1), default=8, help="model calls in flight (1 = one case after another)")
    r.add_argument("--out", default=None, help="write the report here (default: stdout)")
    r.add_argument("--record", default=None, help="write the full run record (JSON) here")
    r.add_argument("--confirm", action="store_true",
                   help="accept the transfer set for this run (recorded with its time; the file is not changed: "
                        "`abeq check-set --confirm` writes the confirmation into it)")
    r.add_argument("--allow-thin", action="store_true", help="accept a set below 5 cases or missing a case type")
    r.add_argument("--fresh", action="store_true", help="ignore cached results (they are still written)")
    r.add_argument("--judge-samples", type=bounded(int, 1, 9), default=1,
                   help="judge each case K times (1-9); majority verdict")
    r.add_argument("--aa", action="store_true", help="also replay the teacher and judge it against itself (noise floor)")
    r.add_argument("--review", default=None, help="name of a review to create or continue (rounds)")
    r.add_argument("--gate", choices=["compress", "directive-clarity"], default="compress",
                   help="compress: no regression; directive-clarity: no regression and a measured directness gain")
    r.add_argument("--markdown", default=None, help="write a Markdown review report here")
    r.add_argument("--csv", default=None, help="write one CSV row per case here")
    r.add_argument("--junit", default=None, help="write JUnit XML (one testcase per case) here")
    r.add_argument("--quiet", action="store_true", help="no progress or summary on stderr (errors still are)")
    r.set_defaults(fn=cmd_run)

    h = sub.add_parser("history", help="the rounds of a review: size, ratio, verdicts, directness")
    h.add_argument("name", help="review name (as given to run --review)")
    h.add_argument("--db", default=None)
    h.add_argument("--json", action="store_true")
    h.set_defaults(fn=cmd_history)

    st = sub.add_parser("stats", help="judge trust: agreement with reviewers (Cohen's kappa) and A/A noise")
    st.add_argument("--db", default=None)
    st.add_argument("--json", action="store_true")
    st.set_defaults(fn=cmd_stats)

    ex = sub.add_parser("export", help="re-export a stored run (overrides applied)")
    ex.add_argument("run_id", type=int)
    ex.add_argument("--db", default=None)
    ex.add_argument("--gate", choices=["compress", "directive-clarity"], default="compress")
    for flag in ("--out", "--record", "--markdown", "--csv", "--junit"):
        ex.add_argument(flag, default=None)
    ex.set_defaults(fn=cmd_export)

    ov = sub.add_parser("override", help="record a reviewer's verdict for a case (a reason is required)")
    ov.add_argument("run_id", type=int)
    ov.add_argument("case_id")
    ov.add_argument("--verdict", required=True, choices=["equivalent", "candidate-regressed", "candidate-diverged"])
    ov.add_argument("--reason", required=True)
    ov.add_argument("--reviewer", default=os.environ.get("USER", ""))
    ov.add_argument("--db", default=None)
    ov.set_defaults(fn=cmd_override)

    c = sub.add_parser("check-set", help="coverage of a transfer set against the original",
                       description="Exit 0 when the set is runnable, 2 when a run would be refused.")
    c.add_argument("--original", required=True)
    c.add_argument("--transfer-set", required=True)
    c.add_argument("--allow-thin", action="store_true", help="accept a set below 5 cases or missing a case type")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.add_argument("--confirm", action="store_true",
                   help="you have read the cases: write the set back confirmed (frozen, hashed, stamped) so later "
                        "runs need no --confirm; a runnable set only (.json or .yaml)")
    c.set_defaults(fn=cmd_check_set)

    a = sub.add_parser("app", help="start the review desk (Streamlit) on 127.0.0.1")
    a.add_argument("--port", type=int, default=8501)
    a.add_argument("--address", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    a.add_argument("--db", default=None)
    a.set_defaults(fn=cmd_app)
    from . import cli_compare
    cli_compare.register(sub)
    from . import cli_sets
    cli_sets.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "fn", None):
        parser.print_help()
        return EXIT_PASS
    from .errors import AbeqError

    try:
        return args.fn(args)
    except AbeqError as e:
        print(f"abeq: {e.render()}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("\nabeq: interrupted; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
