"""`abeq history`, `stats`, `export`, `agree`, `override`, `assign`: reading and amending what runs
left in the database, and sharing a run's cases out to reviewers."""

from __future__ import annotations

import json
import sys

from ..vocab import EQUIVALENT, VERDICTS
from ._common import EXIT_PASS, OUTPUT_OPTIONS, check_outputs, db_arg, existing_store, write_output
from ._settings import add_settings
from .run import write_exports


def register(sub) -> None:
    h = sub.add_parser("history", help="the rounds of a review: size, ratio, verdicts, directness")
    h.add_argument("name", help="review name (as given to run --review)")
    db_arg(h)
    h.add_argument("--json", action="store_true", help="machine-readable output")
    h.set_defaults(fn=cmd_history)

    rn = sub.add_parser(
        "runs",
        help="list the runs in the store, newest first: id, review, documents, models, status, when "
        "(runs made without --review too, so their ids can be found for export, assign or override)",
    )
    rn.add_argument("--review", default=None, metavar="NAME", help="only this review's runs")
    rn.add_argument("--limit", type=int, default=50, help="at most this many (default 50; 0: all)")
    db_arg(rn)
    rn.add_argument("--json", action="store_true", help="machine-readable output")
    rn.set_defaults(fn=cmd_runs)

    st = sub.add_parser(
        "stats",
        help="judge trust: calibration, agreement with reviewers (Cohen's kappa), A/A noise, the checks",
    )
    db_arg(st)
    st.add_argument("--json", action="store_true", help="machine-readable output")
    st.set_defaults(fn=cmd_stats)

    ex = sub.add_parser("export", help="re-export a stored run (overrides applied)")
    ex.add_argument(
        "run_id", type=int, nargs="?", help="the run's id (abeq run prints it; abeq history lists them)"
    )
    ex.add_argument(
        "--overrides",
        default=None,
        metavar="FILE",
        help="write every reviewer decision in the database (overrides and agreements, by the content of "
        "the original, the candidate and the case) here, beside those the file already holds, for "
        "abeq.toml's `overrides =` (abeq gate honours them without a model call); no run id needed",
    )
    db_arg(ex)
    add_settings(ex, ("gate",), help={"gate": "the gate profile the exports apply"})
    for flag, what in (
        ("--out", "the report (JSON; stdout when no other export is asked for)"),
        ("--record", "the full run record (JSON)"),
        ("--markdown", "a Markdown review report"),
        ("--csv", "one CSV row per case"),
        ("--junit", "JUnit XML, one testcase per case"),
    ):
        ex.add_argument(flag, default=None, help=f"write {what} here")
    ex.set_defaults(fn=cmd_export)

    ov = sub.add_parser("override", help="record a reviewer's verdict for a case (a reason is required)")
    ov.add_argument("run_id", type=int, help="the run's id")
    ov.add_argument("case_id", help="the case's id in the transfer set")
    ov.add_argument("--verdict", required=True, choices=VERDICTS, help="the reviewer's verdict")
    ov.add_argument("--reason", required=True, help="why (kept with the override and in every export)")
    ov.add_argument("--reviewer", default=None, help="who overrides (default: your login name)")
    db_arg(ov)
    ov.set_defaults(fn=cmd_override)

    ag = sub.add_parser(
        "agree", help="record that you read a case and accept the judge's verdict (it counts toward kappa)"
    )
    ag.add_argument("run_id", type=int, help="the run's id")
    ag.add_argument("case_id", help="the case's id in the transfer set")
    ag.add_argument("--reason", default="", help="an optional note kept with the agreement")
    ag.add_argument("--reviewer", default=None, help="who agrees (default: your login name)")
    db_arg(ag)
    ag.set_defaults(fn=cmd_agree)

    asg = sub.add_parser(
        "assign",
        help="share a run's cases out to reviewers (each sees their own first on the desk's Review page); "
        "without --to or --clear, list each reviewer's progress and agreement with the judge",
    )
    asg.add_argument("run_id", type=int, help="the run's id")
    asg.add_argument("--to", default=None, metavar="NAMES", help="reviewer name(s), comma-separated: ana,bo")
    asg.add_argument(
        "--cases",
        default=None,
        metavar="IDS",
        help="these cases (comma-separated ids), re-assigned if someone has them; default: every case of "
        "the run nobody is assigned yet (errored and not-run cases left out)",
    )
    asg.add_argument(
        "--deal",
        action="store_true",
        help="deal the cases out evenly among several reviewers (each next case to whoever has fewest)",
    )
    asg.add_argument("--clear", action="store_true", help="take back the assignments (of --cases, else all)")
    asg.add_argument("--json", action="store_true", help="machine-readable output")
    db_arg(asg)
    asg.set_defaults(fn=cmd_assign)


def cmd_history(args) -> int:
    from ..errors import InputError
    from ..results.reports.history import review_history

    store = existing_store(args.db)
    if store.inputs.review(args.name) is None:
        names = ", ".join(r["name"] for r in store.inputs.reviews()) or "none yet"
        raise InputError(f"no review named '{args.name}'", hint=f"Reviews in this database: {names}.")
    rounds = review_history(store, args.name)
    if args.json:
        print(json.dumps(rounds, indent=2))
        return EXIT_PASS
    print(
        f"{'round':>5}  {'run':>4}  {'chars':>6}  {'tokens':>6}  {'lines':>5}  {'ratio':>6}  {'equiv':>5}  "
        f"{'div':>4}"
        f"  {'regr':>4}  {'err':>4}  {'ovr':>4}  {'dir o→c':>9}  candidate · status · runner / judge"
    )
    for r in rounds:
        d = f"{r['directness original']}→{r['directness candidate']}" if r["directness original"] else "-"
        print(
            f"{r['round'] or '-':>5}  {r['run']:>4}  {r['characters']:>6}  {r['tokens (est.)']:>6}  "
            f"{r['lines']:>5}  {r['compression']:>6}  "
            f"{r[EQUIVALENT]:>5}  {r['diverged']:>4}  {r['regressed']:>4}  {r['errored']:>4}  "
            f"{r['overridden']:>4}  {d:>9}  {r['candidate']} · {r['status']} · {r['runner']} / {r['judge']}"
        )
    return EXIT_PASS


def cmd_runs(args) -> int:
    from ..errors import InputError

    store = existing_store(args.db)
    review_id = None
    if args.review is not None:
        row = store.inputs.review(args.review)
        if row is None:
            names = ", ".join(r["name"] for r in store.inputs.reviews()) or "none yet"
            raise InputError(f"no review named '{args.review}'", hint=f"Reviews in this database: {names}.")
        review_id = row["id"]
    reviews = {r["id"]: r["name"] for r in store.inputs.reviews()}
    runs = store.log.runs(review_id)
    if review_id is not None:
        runs = runs[::-1]  # a review's come oldest first: newest first here, as for all runs
    if args.limit > 0:
        runs = runs[: args.limit]
    shown: dict[str, str] = {}

    def name(h: str) -> str:
        if h not in shown:
            loaded = store.inputs.loaded_as(h) or {}
            doc = store.inputs.document(h)
            shown[h] = loaded.get("source") or (doc["name"] if doc else "") or h[:12]
        return shown[h]

    rows = [
        {
            "run": r["id"],
            "review": reviews.get(r["review_id"]) if r["review_id"] else None,
            "round": r["round"],
            "original": name(r["original_hash"]),
            "candidate": name(r["candidate_hash"]),
            "runner": r["runner_model"],
            "judge": r["judge_model"],
            "status": r.get("status"),
            "started": r.get("started_at"),
            "finished": r.get("finished_at"),
        }
        for r in runs
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_PASS
    if not rows:
        print("no runs in this database yet" + (f" for review '{args.review}'" if args.review else ""))
        return EXIT_PASS
    print(f"{'run':>4}  {'started':<19}  {'status':<11}  review · original → candidate · runner / judge")
    for r in rows:
        when = (r["started"] or "")[:19].replace("T", " ")
        review = r["review"] or "(no review)"
        print(
            f"{r['run']:>4}  {when:<19}  {r['status'] or '?':<11}  {review} · {r['original']} → "
            f"{r['candidate']} · {r['runner']} / {r['judge']}"
        )
    return EXIT_PASS


def cmd_stats(args) -> int:
    from ..results.reports.agreement import (
        aa_rates,
        check_witness,
        judge_agreement,
        judge_calibration,
        kappa_text,
    )

    store = existing_store(args.db)
    agree, aa, witness = judge_agreement(store), aa_rates(store), check_witness(store)
    from ..models.baseline import BASELINE_JUDGES

    # the baselines' figures stand in every judge's line; listed apart only when a run used one
    calibrated = {c["judge_model"] for c in store.calibrations.all()} - set(BASELINE_JUDGES)
    judges = sorted({r["judge_model"] for r in store.log.runs()} | calibrated)
    calibration = [judge_calibration(store, j) for j in judges]
    if args.json:
        out = {"judge_agreement": agree, "aa": aa, "checks": witness, "calibration": calibration}
        print(json.dumps(out, indent=2))
        return EXIT_PASS
    for c in calibration:
        print(f"calibration: {c['line']}")
    print(
        "judge agreement with reviewers:"
        if agree
        else "no reviewed cases yet (abeq agree and abeq override record reviews)"
    )
    for a in agree:
        k = "n/a" if a["kappa"] is None or a["kappa_note"] else kappa_text(a["kappa"], "", a["reviewed"])
        print(
            f"  {a['judge_model']}: {a['reviewed']} reviewed ({a['agreed']} agreed, {a['overridden']} "
            f"overridden), raw agreement {a['raw_agreement']:.0%}, "
            f"Cohen's kappa {k}" + "".join(f" ({x})" for x in (a["kappa_note"], a["note"]) if x)
        )
    for a in aa:
        print(
            f"A/A false-regression rate {a['runner_model']} / {a['judge_model']}: "
            f"{a['false_regression_rate']:.0%} of {a['cases']} cases ({a['noisy_cases']} noisy)"
        )
    for w in witness:
        print(
            f"checks vs judge {w['judge_model']}: of {w['cases_with_lost_checks']} case(s) where a check "
            f"the original passes failed on the candidate, the judge called {w['judge_also_regressed']} "
            f"regressed ({w['disagreements']} disagreement(s), each marked uncertain)"
        )
    return EXIT_PASS


def cmd_export(args) -> int:
    from ..errors import InputError
    from ..results.reports.report import build_report

    check_outputs(args, (*OUTPUT_OPTIONS, "--overrides"))  # before any file is written: all or none
    store = existing_store(args.db)
    if args.overrides:
        from ..gate.overrides import dump, from_store, merged

        decisions = from_store(store)
        kept = _kept_decisions(args.overrides)
        write_output(args.overrides, dump(merged(kept, decisions)))
        added = len(merged(kept, decisions)) - len(kept)
        print(
            f"wrote {len(decisions)} reviewer decision(s) to {args.overrides}"
            + (f" beside the {len(kept)} it held ({added} new)" if kept else ""),
            file=sys.stderr,
        )
        if args.run_id is None:
            return EXIT_PASS
    if args.run_id is None:
        raise InputError(
            "abeq export needs a run id (or --overrides FILE)", hint="`abeq history` lists runs."
        )
    if store.log.run(args.run_id) is None:
        raise InputError(f"no run {args.run_id} in this database", path=store.path)
    rr = build_report(store, args.run_id)
    write_exports(store, rr, args, args.gate)
    if args.out or not any((args.record, args.markdown, args.csv, args.junit)):
        write_output(args.out, json.dumps(rr.with_errors(), indent=2, ensure_ascii=False))
    return EXIT_PASS


def _kept_decisions(path: str) -> list[dict]:
    """The decisions an existing file holds (export adds to it: a repository's decisions file keeps
    what reviewers decided in other stores); [] when there is none."""
    from pathlib import Path

    from ..documents import read_text_file
    from ..gate.overrides import parse

    p = Path(path)
    if path == "-" or not p.is_file():
        return []
    return parse(read_text_file(p, what="the decisions file"), path)


def cmd_override(args) -> int:
    return _review_action(args, "override", args.verdict)


def cmd_agree(args) -> int:
    return _review_action(args, "agree", None)


def _login() -> str:
    """Who is at the keyboard, for the audit trail ("" when the system cannot say)."""
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return ""


def _review_action(args, action: str, verdict: str | None) -> int:
    from ..results.reports.report import build_report
    from ..results.review.reviewing import describe, in_effect, record

    store = existing_store(args.db)
    before = in_effect(store, args.run_id, args.case_id) if store.log.run(args.run_id) else None
    record(
        store,
        args.run_id,
        args.case_id,
        action=action,
        verdict=verdict,
        reason=args.reason,
        reviewer=args.reviewer or _login(),
    )
    if before:  # the audit trail keeps it; say what this replaced
        print(f"replaces: {describe(before)}", file=sys.stderr)
    rr = build_report(store, args.run_id)
    print(
        f"recorded; run {args.run_id} now {'PASSES' if rr.passed else 'FAILS'} with {rr.overridden} "
        "override(s)"
    )
    return EXIT_PASS


def _ids(text: str | None) -> list[str] | None:
    return None if text is None else [c.strip() for c in text.split(",") if c.strip()]


def cmd_assign(args) -> int:
    from ..errors import InputError
    from ..results.reports.agreement import kappa_text, per_reviewer
    from ..results.reports.report import case_rows
    from ..results.review.assigning import assign, unassign

    if args.to is not None and args.clear:
        raise InputError("--to and --clear together", hint="Assign with --to, or take back with --clear.")
    store = existing_store(args.db)
    if args.clear:
        n = unassign(store, args.run_id, _ids(args.cases))
        print(f"took back {n} assignment(s) of run {args.run_id}", file=sys.stderr)
    elif args.to is not None:
        plan = assign(store, args.run_id, args.to, _ids(args.cases), deal=args.deal, by=_login())
        if plan:
            from collections import Counter

            loads = Counter(plan.values())
            each = ", ".join(f"{who} {n}" for who, n in loads.items())
            print(f"assigned {len(plan)} case(s) of run {args.run_id}: {each}", file=sys.stderr)
        else:
            print(
                f"nothing to assign: every case of run {args.run_id} a reviewer can act on is assigned "
                "(--cases re-assigns named cases; --clear takes assignments back)",
                file=sys.stderr,
            )
    assigned = {cid: a["reviewer"] for cid, a in store.assignments.of_run(args.run_id).items()}
    if store.log.run(args.run_id) is None:
        raise InputError(f"no run {args.run_id} in this database", path=store.path)
    table = per_reviewer(case_rows(store, args.run_id), assigned)
    if args.json:
        print(json.dumps({"run_id": args.run_id, "assigned": assigned, "reviewers": table}, indent=2))
        return EXIT_PASS
    total = len(store.log.run_cases(args.run_id))
    print(f"run {args.run_id}: {len(assigned)} of {total} cases assigned")
    if table:
        print(f"{'reviewer':<20} {'assigned':>8} {'reviewed':>8} {'left':>5} {'agreement':>9}  kappa")
    for r in table:  # each reviewer's figures from their own actions on their own cases
        agree = "-" if r["raw_agreement"] is None else f"{r['raw_agreement']:.0%}"
        k = kappa_text(r["kappa"], r["kappa_note"], r["acted"])
        print(
            f"{r['reviewer'][:20]:<20} {r['assigned']:>8} {r['reviewed']:>8} {r['left']:>5} {agree:>9}  {k}"
            + (f" ({r['kappa_note']})" if r["kappa_note"] else "")
        )
    return EXIT_PASS
