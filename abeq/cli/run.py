"""`abeq run`: original and candidate over a transfer set, each case judged; exit code from the gate."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager

from ..vocab import DIRECTIVE_CLARITY, FINISHED, INTERRUPTED
from ._common import (
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    OUTPUT_OPTIONS,
    caution,
    check_outputs,
    db_arg,
    existing_store,
    shard_arg,
    write_output,
)
from ._progress import Bar
from ._settings import CODE, RESUME, RUN, add_settings, run_settings, settings_given


def register(sub) -> None:
    r = sub.add_parser(
        "run",
        help="run original and candidate over a transfer set and judge each case",
        description="Exit codes: 0 pass, 1 a case regressed, 2 bad input, 3 a case errored, 4 an "
        "unexpected error (not a verdict), 130 interrupted.",
    )
    r.add_argument("--original", required=True, help="the teacher document")
    r.add_argument("--candidate", required=True, help="the rewritten document under test")
    r.add_argument("--transfer-set", required=True, help="cases: .json, .yaml, .csv or .jsonl")
    add_settings(r, RUN)  # every run setting, from the one table (abeq.execution.options)
    db_arg(r)
    r.add_argument(
        "--confirm",
        action="store_true",
        help="accept the transfer set for this run (recorded with its time; the file is not changed: "
        "`abeq check-set --confirm` writes the confirmation into it)",
    )
    r.add_argument("--out", default=None, help="write the report here (default: stdout)")
    r.add_argument("--record", default=None, help="write the full run record (JSON) here")
    r.add_argument("--markdown", default=None, help="write a Markdown review report here")
    r.add_argument("--csv", default=None, help="write one CSV row per case here")
    r.add_argument("--junit", default=None, help="write JUnit XML (one testcase per case) here")
    r.add_argument("--quiet", action="store_true", help="no progress or summary on stderr (errors still are)")
    r.add_argument(
        "--shard",
        type=shard_arg,
        default=None,
        metavar="K/N",
        help="run only the K-th of N shares of the cases into the run (every N-th case from the K-th), "
        "e.g. one per CI job of a matrix on a shared --db; the report, exports and exit code come "
        "whole from the share that lands last (the others exit 0 once theirs is stored)",
    )
    r.set_defaults(fn=cmd_run)

    rs = sub.add_parser(
        "resume",
        help="resume a cancelled or interrupted run with its own stored settings",
        description="Makes only the calls the run has not made. Exit codes as for `abeq run`; "
        "130 when interrupted.",
    )
    rs.add_argument(
        "run_id", type=int, help="the run's id (the desk's Run page and `abeq history` list them)"
    )
    db_arg(rs)
    # the gate, and the set's code: never stored with a run (a database handed over must not grant it)
    add_settings(rs, RESUME, help={"gate": "the gate profile the exit code and exports apply"})
    for flag in OUTPUT_OPTIONS:
        rs.add_argument(flag, default=None, help=f"as for `abeq run {flag}`")
    rs.add_argument("--quiet", action="store_true", help="no progress or summary on stderr")
    g = rs.add_argument_group(
        "a command run",
        "A run made with --runner-cmd stored its command in the database. It runs again only when you "
        "give it again (with its --runner-env names) or pass --trust-stored-command; resume without "
        "either shows it.",
    )
    g.add_argument("--runner-cmd", default=None, metavar="CMD", help="the run's command, given again")
    g.add_argument(
        "--runner-env", action="append", default=None, metavar="NAME", help="its --runner-env names, again"
    )
    g.add_argument(
        "--trust-stored-command",
        action="store_true",
        help="run the command stored with the run (and pass the environment variables it names) "
        "without giving it again",
    )
    rs.set_defaults(fn=cmd_resume)


def cmd_run(args) -> int:
    return stoppable(_run, args)


def stoppable(command, args) -> int:
    """`command(args, stop)` with Ctrl-C and SIGTERM setting `stop` (see on_signals): for the commands
    that run a model call after another (run, mutate)."""
    from ..execution.engine import Stop

    stop = Stop()
    with on_signals(stop, args.quiet):
        return command(args, stop)


def _run(args, stop) -> int:
    from ..api import prepare_run

    # Everything that would fail after the model calls is refused now, with nothing stored.
    check_outputs(args)
    settings = run_settings(args, RUN)
    prepared = prepare_run(
        args.original,
        args.candidate,
        args.transfer_set,
        store=args.db,
        confirm=args.confirm,
        settings=settings,
        shard=args.shard,
    )
    for w in prepared.warnings:
        print(f"warning: {w}", file=sys.stderr)
    runner_caution(prepared, args.quiet)
    try:
        return execute(prepared, args, stop, "Run the same command again to resume it.")
    finally:
        prepared.store.close()  # now, not whenever a garbage collection gets to it: that checkpoints the file


def cmd_resume(args) -> int:
    from ..api import resume_run
    from ..execution.engine import Stop

    check_outputs(args)
    stop = Stop()
    with on_signals(stop, args.quiet):
        store = existing_store(args.db)
        try:
            prepared = resume_run(
                args.run_id,
                store,
                **settings_given(args, CODE),
                runner_cmd=args.runner_cmd,
                runner_env=tuple(args.runner_env or ()),
                trust_stored_command=args.trust_stored_command,
            )
            runner_caution(prepared, args.quiet)
            return execute(prepared, args, stop, f"`abeq resume {args.run_id}` resumes it again.")
        finally:
            store.close()


def runner_caution(prepared, quiet: bool) -> None:
    cfg = prepared.engine.cfg
    if cfg.mode.kind != "command":  # a runner command's model is the agent's business
        caution(cfg.runner, quiet)


def execute(prepared, args, stop, how_to_resume: str) -> int:
    """Make a prepared run's calls, then write its report and exports; 130 when a signal stopped it."""
    from ..results.reports.report import exit_code

    if not args.quiet:
        print_estimate(prepared)
    bar = Bar(args.quiet)
    try:
        rr = prepared.run(on_progress=bar, cancel=stop)
    finally:
        bar.close()  # stopped early: the line ends before anything else is printed
    shard = getattr(args, "shard", None)
    if shard and rr.run["status"] != FINISHED and not stop.is_set():
        c = prepared.store.log.case_counts(prepared.run_id)
        print(
            f"shard {shard[0]}/{shard[1]} of run {prepared.run_id} stored its share: {c['done']} of "
            f"{c['total']} cases done; the report is whole when the last share lands",
            file=sys.stderr,
        )
        return 0
    if stop.is_set() and rr.run["status"] != FINISHED:
        # no export: a report of the cases done so far would overwrite a whole one with a half
        print(
            f"\nabeq: run {prepared.run_id} {rr.run['status']}; what finished is kept. {how_to_resume}",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    store, gate = prepared.store, args.gate
    write_exports(store, rr, args, gate)
    write_output(args.out, json.dumps(rr.with_errors(), indent=2, ensure_ascii=False))
    if not args.quiet:
        print_outcome(store, rr, gate)
    else:
        print_errors(rr)  # quiet drops progress and the summary, never the errors
    for w in prepared.warnings:
        if w.startswith("UNSANDBOXED"):  # said at the start and again under the outcome
            print(f"warning: {w}", file=sys.stderr)
    return exit_code(rr, gate)


@contextmanager
def on_signals(stop, quiet: bool):
    """Ctrl-C or SIGTERM: the run stops starting calls, drops those in flight, is marked interrupted,
    and the command exits 130. A second Ctrl-C stops at once (the run then reads as interrupted
    because its process is gone)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():  # only the main thread gets signals
        yield
        return

    def handler(signum, frame):
        if stop.is_set():
            raise KeyboardInterrupt
        stop.stop(INTERRUPTED)
        if not quiet:
            print(
                "\nabeq: interrupted: no new model call starts; calls in flight are dropped "
                "(Ctrl-C again to quit at once)",
                file=sys.stderr,
            )

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def print_estimate(prepared) -> None:
    from ..execution.estimate import describe_estimate

    est, eng = prepared.estimate(), prepared.engine
    n = len(eng.ts.cases)
    said = describe_estimate(est, n, eng.cfg.aa)
    samples = f"{est['runner_samples']} samples x " if est["runner_samples"] > 1 else ""
    print(
        f"run {prepared.run_id}: {n} cases, variant {eng.cfg.variant}, round {prepared.round}. {said[0]} "
        f"The review so far: N x {samples}(1 + rounds) = {est['review_budget_runner_calls']} runner calls.",
        file=sys.stderr,
    )
    for line in said[1:]:
        print(line, file=sys.stderr)


def write_exports(store, rr, args, gate: str) -> None:
    from ..results.reports.exports import render

    for fmt in ("record", "markdown", "csv", "junit"):  # --out is written by each command
        if getattr(args, fmt, None):
            write_output(getattr(args, fmt), render(store, rr, fmt, gate))


def print_outcome(store, rr, gate: str) -> None:
    from ..results.reports.agreement import aa_rates
    from ..results.reports.report import gate_result

    st = store.log.call_stats(rr.run["id"])
    s = rr.report["summary"]
    g = gate_result(rr, gate)
    cost = "unknown cost" if st["unpriced"] else f"${st['cost']:.4f}"
    print(
        f"{'PASS' if g['pass'] else 'FAIL'} ({gate}): {s['equivalents']} equivalent, {s['divergences']} "
        "diverged, "
        f"{s['regressions']} regressed, {len(rr.failed)} errored"
        + (f", {len(rr.not_run)} not run" if rr.not_run else "")
        + (f", {rr.overridden} overridden" if rr.overridden else "")
        + f" · {st['made']} calls made ({st['teacher_made']} teacher), {st['cached']} from cache · "
        f"{st['prompt_tokens'] + st['completion_tokens']} tokens · {cost}",
        file=sys.stderr,
    )
    if st["cache_read_tokens"] or st["cache_write_tokens"]:
        print(f"provider prompt cache: {cache_line(st)}", file=sys.stderr)
    if gate == DIRECTIVE_CLARITY:
        print(
            f"directness: original {g['mean_original_directness']} → candidate "
            f"{g['mean_candidate_directness']}; "
            "per case: " + ", ".join(f"{k} {v:+d}" for k, v in g["per_case_delta"].items()),
            file=sys.stderr,
        )
    truncated = [r.case_id for r in rr.rows if r.gate_truncated]
    if truncated:
        print(
            "gate-truncated (stopped at a gate with no scripted answer; judged up to it): "
            f"{', '.join(truncated)}",
            file=sys.stderr,
        )
    from ..results.reports.observed import unreported

    silent = unreported(store, rr.rows)
    if silent:
        print(
            "self-report not (fully) reported by the runner (judged from the transcript and the workspace "
            f"changes): {', '.join(silent)}",
            file=sys.stderr,
        )
    uncertain = [r.case_id for r in rr.rows if len(set(r.samples)) > 1 and not r.sampling]
    if uncertain:
        print(f"uncertain (judge samples disagree): {', '.join(uncertain)}", file=sys.stderr)
    undecided = [r for r in rr.rows if r.undecided]
    if undecided:
        n = (undecided[0].sampling or {}).get("n")
        print(
            f"undecided (a behaviour shown less often on the candidate, within chance at {n} samples; "
            f"more samples could tell): {', '.join(r.case_id for r in undecided)}",
            file=sys.stderr,
        )
    for r in rr.rows:
        if r.checks_lost:
            print(
                f"case {r.case_id}: {len(r.checks_lost)} check(s) the teacher passes fail on the candidate "
                f"({'; '.join(c.label for c in r.checks_lost)[:200]})"
                + (f"; the judge said {r.judge_verdict}: marked uncertain" if r.checks_disagree else ""),
                file=sys.stderr,
            )
    from ..results.store.mutations import mutation_line

    m = store.mutations.latest(
        rr.run["transfer_set_hash"], rr.run["original_hash"], rr.run["runner_model"], rr.run["judge_model"]
    )
    if m:
        print(f"mutation score of this set: {mutation_line(m)}", file=sys.stderr)
    from ..results.reports.agreement import judge_calibration

    print(judge_calibration(store, rr.run["judge_model"])["line"], file=sys.stderr)
    for a in aa_rates(store, rr.run["id"]):
        print(
            f"A/A false-regression rate: {a['false_regression_rate']:.0%} of {a['cases']} cases "
            f"({a['runner_model']} / {a['judge_model']})",
            file=sys.stderr,
        )
    print_errors(rr)


def print_errors(rr) -> None:
    """One stderr line per errored case, and one for the cases --fail-fast did not start."""
    for e in rr.failed:
        print(f"error: case {e['case_id']} ({e['stage']}): {e['error'][:200]}", file=sys.stderr)
    stop = rr.stopped_early()
    if rr.incomplete() and not stop:  # cancelled or interrupted: the judged cases stand
        print(f"{rr.incomplete()}; the same command resumes the run", file=sys.stderr)
    if stop:
        print(
            f"stopped early (--fail-fast): case {stop['after_case']} was judged regressed; "
            f"{stop['not_run']} case(s) not run. The same command without --fail-fast runs them "
            "(finished cases come from the cache).",
            file=sys.stderr,
        )


def cache_line(st) -> str:
    """What the provider's prompt cache did for a run: tokens read and written, and what it saved."""
    saved = "" if st["unpriced"] else f", saving ${st['cache_saved']:.4f}"
    return (
        f"{st['cache_read_tokens']:,} prompt tokens read from it, {st['cache_write_tokens']:,} written"
        f"{saved} (of {st['prompt_tokens']:,} prompt tokens)"
    )


__all__ = ["register", "cmd_run", "cmd_resume", "write_exports", "EXIT_INCOMPLETE"]
