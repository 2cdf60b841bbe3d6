"""The `abeq` command line. Heavy imports stay inside the commands so `abeq --help` is instant."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

EXIT_PASS, EXIT_REGRESSED, EXIT_BAD_INPUT, EXIT_INCOMPLETE = 0, 1, 2, 3


def _model_args(p: argparse.ArgumentParser, *, runner: bool = True) -> None:
    if runner:
        p.add_argument("--runner-model", default=None, help="litellm model string for the runner (default: local/smollm2)")
    p.add_argument("--judge-model", default=None, help="litellm model string for the judge (default: the runner model)")
    p.add_argument("--api-base", default=None, help="base URL of an OpenAI-compatible or other server")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds before a model call is cut off and retried")
    p.add_argument("--max-tokens", type=int, default=None, help="reply length limit per call")
    p.add_argument("--db", default=None, help="sqlite file (default: $ABEQ_DB or ./abeq.db)")


def _spec(name, args):
    from .models import DEFAULT_MODEL, ModelSpec

    name = name or DEFAULT_MODEL
    max_tokens = args.max_tokens or (700 if name.startswith("local/") else 2048)
    return ModelSpec(name=name, api_base=args.api_base, timeout=args.timeout, max_tokens=max_tokens)


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


def _write(path: str | None, text: str) -> None:
    if not path or path == "-":
        sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))
        return
    tmp = Path(path).with_suffix(Path(path).suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)  # never a half-written export


def cmd_run(args) -> int:
    from .documents import detect_variant, load_document
    from .engine import Engine, RunConfig, estimate_calls
    from .report import build_report, exit_code, run_record
    from .store import Store
    from . import transferset as tsm

    original = load_document(args.original, "original")
    candidate = load_document(args.candidate, "candidate")
    ts = tsm.load(args.transfer_set)
    variant = args.variant or detect_variant(args.original)
    if not ts.user_confirmed:
        if not args.confirm:
            from .errors import NotConfirmedError

            raise NotConfirmedError("the transfer set is not confirmed: no runner call happens before a person accepts it",
                                    path=args.transfer_set,
                                    hint="Review the cases (abeq check-set), then re-run with --confirm to accept them.")
        ts = tsm.confirm(ts, original.hash, thin_accepted=args.allow_thin or None)
    cov = tsm.require_runnable(original.text, ts, args.allow_thin, args.transfer_set)
    if ts.document_hash and ts.document_hash != original.hash:
        print(f"warning: {args.transfer_set} was confirmed for a different version of the original", file=sys.stderr)
    for w in cov.warnings:
        print(f"warning: {w}", file=sys.stderr)
    runner = _spec(args.runner_model, args)
    judge = _spec(args.judge_model or args.runner_model, args)
    cfg = RunConfig(runner=runner, judge=judge, variant=variant, concurrency=args.concurrency, fresh=args.fresh,
                    judge_samples=args.judge_samples, aa=args.aa, allow_thin=args.allow_thin, review=args.review)
    if runner.name.startswith("local/") and not args.quiet:
        print("note: the embedded model is tiny (135M); its verdicts are for trying abeq, not for decisions. "
              "Use --runner-model/--judge-model with a stronger model.", file=sys.stderr)
    store = Store(args.db)
    eng = Engine(store, original, candidate, ts, cfg, on_progress=_Bar(args.quiet))
    run_id = eng.prepare()
    if not args.quiet:
        est = estimate_calls(len(ts.cases), 1, cfg.judge_samples, cfg.aa)
        print(f"run {run_id}: {len(ts.cases)} cases, variant {variant}; at most {est['total']} model calls "
              f"({est['runner_calls']} runner, {est['judge_calls']} judge), fewer when cached", file=sys.stderr)
    eng.run()
    rr = build_report(store, run_id)
    gate = getattr(args, "gate", "compress")
    if args.record:
        _write(args.record, json.dumps(run_record(store, rr, gate), indent=2, ensure_ascii=False))
    _write(args.out, json.dumps(rr.with_errors(), indent=2, ensure_ascii=False))
    if not args.quiet:
        st = store.call_stats(run_id)
        s = rr.report["summary"]
        print(f"{'PASS' if rr.passed else 'FAIL'}: {s['equivalents']} equivalent, {s['divergences']} diverged, "
              f"{s['regressions']} regressed, {len(rr.errors)} errored · {st['made']} calls made, "
              f"{st['cached']} from cache", file=sys.stderr)
    return exit_code(rr, gate)


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
              + f" · {'confirmed' if ts.user_confirmed else 'not confirmed'}")
        for w in cov.warnings:
            print(f"warning: {w}")
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
    r.add_argument("--concurrency", type=int, default=8, help="model calls in flight (1 = one case after another)")
    r.add_argument("--out", default=None, help="write the report here (default: stdout)")
    r.add_argument("--record", default=None, help="write the full run record (JSON) here")
    r.add_argument("--confirm", action="store_true", help="accept an unconfirmed transfer set (records who/when)")
    r.add_argument("--allow-thin", action="store_true", help="accept a set below 5 cases or missing a case type")
    r.add_argument("--fresh", action="store_true", help="ignore cached results (they are still written)")
    r.add_argument("--judge-samples", type=int, default=1, help="judge each case K times; majority verdict")
    r.add_argument("--aa", action="store_true", help="also replay the teacher and judge it against itself (noise floor)")
    r.add_argument("--review", default=None, help="name of a review to create or continue (rounds)")
    r.add_argument("--quiet", action="store_true", help="no progress on stderr")
    r.set_defaults(fn=cmd_run)

    c = sub.add_parser("check-set", help="coverage of a transfer set against the original",
                       description="Exit 0 when the set is runnable, 2 when a run would be refused.")
    c.add_argument("--original", required=True)
    c.add_argument("--transfer-set", required=True)
    c.add_argument("--allow-thin", action="store_true")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.set_defaults(fn=cmd_check_set)

    a = sub.add_parser("app", help="start the review desk (Streamlit) on 127.0.0.1")
    a.add_argument("--port", type=int, default=8501)
    a.add_argument("--address", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    a.add_argument("--db", default=None)
    a.set_defaults(fn=cmd_app)
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
