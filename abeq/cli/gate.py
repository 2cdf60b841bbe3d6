"""`abeq gate`: the pull-request gate, base document against head document over the same cases."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ._common import EXIT_BAD_INPUT, EXIT_PASS, check_outputs, shard_arg, write_output
from ._settings import CODE, add_settings, settings_given

if TYPE_CHECKING:
    from ..execution.settings import RunSettings

GATE_OUTPUTS = ("--out", "--markdown", "--junit")


def register(sub) -> None:
    g = sub.add_parser(
        "gate",
        help="the pull-request gate: each changed document in abeq.toml, base against head",
        description="Runs every document abeq.toml names whose content changed between the merge base of "
        "--base and --head (an @imported file or a file of a skill's folder counts): original = the base's, "
        "candidate = the head's, over the base's cases and those the head adds (a renamed document is "
        "followed). Exit codes as `abeq run`: 0 pass (or nothing changed), 1 a case regressed or a listed "
        "document was deleted, 2 bad input or a change the runner cannot see, 3 a case errored.",
    )
    g.add_argument(
        "--base", default=None, help="the revision the pull request merges into (e.g. origin/main)"
    )
    g.add_argument("--head", default="HEAD", help="the pull request's revision (default HEAD)")
    g.add_argument(
        "--db",
        default=None,
        help="sqlite file (default: $ABEQ_DB or ./abeq.db), outside the checkout or git-ignored: a store "
        "the pull request could have committed is refused",
    )
    g.add_argument("--config", default="abeq.toml", help="the project file, from the repository root")
    g.add_argument("--out", default=None, help="write every document's result as one JSON here")
    g.add_argument("--markdown", default=None, help="write the gate's Markdown report (the comment) here")
    g.add_argument("--junit", default=None, help="write JUnit XML, one testsuite per document, here")
    g.add_argument(
        "--github",
        action="store_true",
        help="comment on the pull request (one comment, updated on every push) and write the job summary; "
        "a fork's pull request is said so, and nothing is called",
    )
    g.add_argument(
        "--fail-on-fork",
        action="store_true",
        help="with --github: a fork's pull request, which the gate cannot check (no secrets), exits 2 "
        "instead of 0, so a required check stays red until a maintainer gates it",
    )
    g.add_argument("--init", action="store_true", help="write an abeq.toml for the documents found here")
    g.add_argument(
        "--check-sets",
        action="store_true",
        help="no model: `abeq check-set` for each configured document among FILES (all when none is given) "
        "in the working tree; exit 2 when the set is unconfirmed or edited after its confirmation, when a "
        "run would refuse it, or a section is uncovered where abeq.toml says require_coverage (the "
        "pre-commit hook)",
    )
    g.add_argument("files", nargs="*", metavar="FILES", help="with --check-sets: the files a commit changes")
    g.add_argument("--quiet", action="store_true", help="no progress on stderr")
    g.add_argument(
        "--shard",
        type=shard_arg,
        default=None,
        metavar="K/N",
        help="run only the K-th of N shares of each changed document's cases (one per CI job of a "
        "matrix on a shared --db, as `abeq run --shard`); the reports, the comment and the exit code "
        "come whole from one shard, the first to find every run finished (the others exit 0 once theirs "
        "is stored)",
    )
    add_settings(g, CODE)  # the set's code: only the person running the gate grants it
    g.set_defaults(fn=cmd_gate)


def settings_for(args):
    """A document's settings (abeq.toml's, checked once when the file was read) -> its RunSettings,
    with what only the person running the gate may give: --trust-code, --unsandboxed, --check-env."""
    granted = settings_given(args, CODE)  # parsed by the table's own options: of the fields' types

    def build(settings: RunSettings) -> RunSettings:
        return settings.given(**granted)

    return build


def cmd_gate(args) -> int:
    from ..errors import AbeqError, InputError

    if args.init:
        return _init(args)
    if args.check_sets:
        return _check_sets(args)
    if args.files:
        raise InputError(
            f"unexpected {args.files[0]}", hint="Files are for --check-sets (the pre-commit hook)."
        )
    if not args.base:
        raise InputError("abeq gate needs --base REV", hint="e.g. abeq gate --base origin/main")
    check_outputs(args, GATE_OUTPUTS)
    from ..documents.git_source import Repo
    from ..gate.changes import CHANGED, REMOVED, read_project, revisions, targets
    from ..gate.comment import headline
    from ..gate.run import removals

    pr = _pull_request() if args.github else None
    if pr is not None and pr.fork:
        from ..gate import github
        from ..gate.comment import fork_note

        said = github.write_summary(fork_note(args.fail_on_fork))
        print(
            "abeq gate: NOT CHECKED: this is a fork's pull request, and GitHub gives its workflow no "
            "secrets, so no model is called (a maintainer can push its branch to this repository to "
            "gate it)" + ("; --fail-on-fork: exit 2" if args.fail_on_fork else ""),
            file=sys.stderr,
        )
        if said:
            print(f"abeq: {said}", file=sys.stderr)
        return EXIT_BAD_INPUT if args.fail_on_fork else EXIT_PASS
    repo = Repo.at()
    revs = revisions(repo, args.base, args.head)
    # the base's abeq.toml decides what is gated and how (a pull request cannot loosen its own gate);
    # a repository adopting abeq has none at the base yet: then the head's
    from_base = read_project(repo, revs.base, args.config)
    project = from_base or read_project(repo, revs.head, args.config)
    if project is None:
        raise InputError(
            f"{args.config} does not exist at {args.base} or {args.head}",
            hint="`abeq gate --init` writes one for the documents it finds; commit it.",
        )
    found = targets(repo, revs, project)
    changed = [t for t in found if t.state == CHANGED]
    # a document the pull request deletes fails while the base's abeq.toml lists it
    removed = removals(found) if from_base is not None else []
    if not changed:
        from ..gate.comment import render
        from ..gate.run import GateResult

        new = [t.path for t in found if t.state != "unchanged" and t.state != REMOVED]
        gone = [t.path for t in found if t.state == REMOVED]
        line = (
            f"abeq gate: no configured document changed between {revs.base[:12]} and {revs.head[:12]} "
            f"({len(found)} configured"
            + (f"; new, not gated: {', '.join(new)}" if new else "")
            + (f"; removed by this pull request: {', '.join(gone)}" if gone else "")
            + ")"
        )
        result = GateResult(revs, found, removed)
        print(line, file=sys.stderr if removed else sys.stdout)
        for o in removed:
            print(headline(o, None, markdown=False), file=sys.stderr)
        _write(args, result, None, render(result, None, limit=None))
        if pr is not None:  # an earlier push's comment must not stand for this one
            _publish(pr, render(result, None, note=line), create=bool(removed))
        return result.exit_code
    try:
        return _gate(args, repo, revs, found, project, pr, removed)
    except AbeqError as e:  # a refusal (an unconfirmed set, a bad model string) is said on the PR too
        if pr is not None:
            from ..gate.comment import refusal

            _publish(pr, refusal(e.render()))
        raise


def _pull_request():
    from ..gate import github  # urllib's HTTP client: only with --github

    return github.pull_request()


def _gate(args, repo, revs, found, project, pr, removed) -> int:
    from ..gate import comment
    from ..gate.run import GateResult, prepare, run_all, shares_landed
    from ..results.store.store import open_store
    from .run import on_signals

    untracked_store(repo, revs, args.db)
    store = open_store(args.db)
    try:
        decisions = _decisions(repo, revs, project, store)
        prepared = prepare(repo, revs, found, store, settings_for(args), decisions, args.shard)
        for pl in prepared:  # what `abeq run` warns of, per document (min_judge_recall, coverage, …)
            for w in pl.prepared.warnings if pl.prepared is not None else ():
                print(f"warning: {pl.target.path}: {w}", file=sys.stderr)
        from ..execution.engine import Stop

        stop = Stop()
        with on_signals(stop, args.quiet):
            outcomes = run_all(prepared, on_progress=None if args.quiet else _progress(), cancel=stop)
        if args.shard and not stop.is_set():
            landed = shares_landed(prepared, store, args.shard)
            if landed is None:
                return _share_stored(args.shard, prepared, store)
            outcomes = landed
        result = GateResult(revs, found, [*outcomes, *removed])
        where = _pointers(args, project)
        body = comment.render(result, store, where=where)
        _write(args, result, store, comment.render(result, store, limit=None, where=where))
        for o in result.outcomes:
            print(comment.headline(o, store, markdown=False), file=sys.stderr)
        if pr is not None:
            _publish(pr, body)
        return result.exit_code
    finally:
        store.close()


def untracked_store(repo, revs, db: str | None) -> None:
    """Refuse a store the pull request could have written: one git tracks at the head, or one inside
    the work tree that git does not ignore (a checkout writes only tracked files; an ignored one was
    written on this machine). A store holds trusted state (cached verdicts, reviewers' decisions):
    committed in a pull request, it would pass the PR's regression with no model call."""
    import os
    import subprocess

    from ..errors import InputError
    from ..results.store import postgres
    from ..results.store.store import db_path

    path = db_path(db)
    if postgres.is_url(path):
        return
    roots = dict.fromkeys((str(repo.root), os.path.realpath(repo.root)))
    inside = [
        os.path.relpath(p, r).replace(os.sep, "/")
        for p in dict.fromkeys((os.path.abspath(path), os.path.realpath(path)))
        for r in roots
        if p.startswith(r + os.sep)
    ]
    # git's own folder is no part of the work tree: no checkout writes there
    inside = [rel for rel in inside if rel != ".git" and not rel.startswith(".git/")]
    said = f"--db {path}" if db else f"the store {path} ($ABEQ_DB, else ./abeq.db)"
    fix = (
        "keep the gate's store outside the checkout (the Action keeps it under $RUNNER_TEMP), "
        "or use a shared PostgreSQL store"
    )
    head = repo.tree(revs.head)
    for rel in dict.fromkeys(inside):
        if any(rel + end in head for end in ("", "-wal", "-shm", "-journal")):
            raise InputError(
                f"{said}: git tracks {rel} at {revs.head_rev}, so the pull request could have written it "
                f"(cached verdicts, reviewers' decisions); {fix}"
            )
        check = ["git", "check-ignore", "-q", "--", rel]
        if subprocess.run(check, cwd=repo.root, capture_output=True, check=False).returncode != 0:
            raise InputError(
                f"{said}: it lies inside the repository's work tree and git does not ignore it, so a pull "
                f"request could commit it; {fix}"
            )


def _pointers(args, project):
    """Where the comment sends a reviewer: the store (the Action uploads it as $ABEQ_ARTIFACT, listed
    on the workflow run's page) and the decisions file the base's abeq.toml names."""
    import os

    from ..gate.comment import Pointers
    from ..results.store import postgres

    env = os.environ
    db = args.db or env.get("ABEQ_DB") or "abeq.db"
    if postgres.is_url(db):  # a team store: no artifact holds it, and its password is shown nowhere
        return Pointers(db=postgres.redacted(db), decisions=project.overrides or "", base=args.base or "")
    run_url = ""
    if env.get("GITHUB_RUN_ID") and env.get("GITHUB_REPOSITORY"):
        server = (env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
        run_url = f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
    return Pointers(
        db=Path(db).name if env.get("ABEQ_ARTIFACT") else db,
        artifact=env.get("ABEQ_ARTIFACT", ""),
        run_url=run_url,
        decisions=project.overrides or "",
        base=args.base or "",
    )


def _share_stored(shard: tuple[int, int], planned, store) -> int:
    """A shard whose share landed while another's is still out, or after another shard claimed the
    report: one line, exit 0, no report."""
    done = []
    for pl in planned:
        if pl.prepared is not None:
            c = store.log.case_counts(pl.prepared.run_id)
            done.append(f"{pl.target.path} (run {pl.prepared.run_id}): {c['done']} of {c['total']}")
    print(
        f"abeq gate: shard {shard[0]}/{shard[1]} stored its share ({'; '.join(done) or 'nothing to run'} "
        "cases done); the report, comment and exit code come from one shard, the first to find every run "
        "finished",
        file=sys.stderr,
    )
    return EXIT_PASS


def _decisions(repo, revs, project, store):
    """Reviewers' decisions: the store's, and the file abeq.toml names as the merge base holds it.
    Not as the head holds it: the pull request's author could write a decision there that passes
    their own regression under a reviewer's name. Decisions committed in the pull request count once
    it is merged (or at once through a shared store)."""
    from ..gate.overrides import Decisions, from_store, parse

    kept = []
    name = project.overrides
    if name and name in repo.tree(revs.base):  # none written yet: none kept
        where = f"git:{revs.base[:12]}:{name}"
        kept = parse(repo.read(revs.base, name).decode("utf-8", errors="replace"), where)
    if (
        name
        and name in repo.tree(revs.head)
        and (name not in repo.tree(revs.base) or repo.read(revs.head, name) != repo.read(revs.base, name))
    ):
        print(
            f"note: {name} changed in this pull request; the gate reads reviewers' decisions as the base "
            "has them (a pull request cannot decide its own cases): they count once it is merged",
            file=sys.stderr,
        )
    return Decisions.of(from_store(store), kept)


def _progress():
    """One progress line per document's run (a line closes when its run's cases are done)."""
    from ._progress import Bar

    bars = [Bar(False)]

    def on_progress(p: dict) -> None:
        if bars[-1].closed:
            bars.append(Bar(False))
        bars[-1](p)

    return on_progress


def _publish(pr, body: str, *, create: bool = True) -> None:
    """The comment and the job summary; a failure is said once and changes no exit code."""
    from ..gate import github

    for said in (github.upsert_comment(pr, body, create=create), github.write_summary(body)):
        if said:
            print(f"abeq: {said}", file=sys.stderr)


def _write(args, result, store, body: str) -> None:
    import json

    if args.markdown:
        write_output(args.markdown, body)
    if args.junit:
        write_output(args.junit, junit(result, store))
    if args.out:
        write_output(args.out, json.dumps(result.as_json(store), indent=2, ensure_ascii=False))


def junit(result, store) -> str:
    """One <testsuites> holding each gated document's testsuite (abeq run --junit's, renamed by path)."""
    import xml.etree.ElementTree as ET

    from ..gate.comment import headline
    from ..results.reports.exports import render

    root = ET.Element("testsuites", name="abeq gate")
    for o in result.outcomes:
        if o.report is None and o.exit:  # not judged, or deleted: a failure a CI's JUnit view shows too
            suite = ET.SubElement(root, "testsuite", name=o.target.path, tests="1", failures="1")
            case = ET.SubElement(suite, "testcase", classname=o.target.path, name="gate")
            ET.SubElement(case, "failure", message=headline(o, store, markdown=False))
            continue
        if o.report is None:
            continue
        xml = render(store, o.report, "junit", o.target.entry.settings.gate)
        got = ET.fromstring(xml)
        suites = [got] if got.tag == "testsuite" else list(got)
        for s in suites:
            s.set("name", f"{o.target.path}: {s.get('name', '')}".rstrip(": "))
            root.append(s)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def _init(args) -> int:
    from ..documents.git_source import Repo
    from ..errors import InputError
    from ..gate.project import found_documents, template

    repo = Repo.at()
    target = repo.root / args.config
    if target.exists():
        raise InputError(
            f"{args.config} exists already", path=str(target), hint="Edit it, or remove it first."
        )
    listed = repo.git(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], what="the files here")
    docs = found_documents([p for p in listed.split("\0") if p])
    if not docs:
        print(
            "abeq gate --init: no CLAUDE.md, AGENTS.md, GEMINI.md or SKILL.md found; wrote nothing",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    write_output(str(target), template(docs))
    print(f"wrote {Path(args.config)} for {len(docs)} document(s): {', '.join(docs)}", file=sys.stderr)
    return EXIT_PASS


def _check_sets(args) -> int:
    """The pre-commit check: each configured document the commit touches (or whose set it touches)
    against its transfer set, in the working tree, with no model."""
    from .. import sets
    from ..documents import load_document
    from ..documents.git_source import Repo
    from ..errors import AbeqError, InputError
    from ..gate.project import parse

    repo = Repo.at()
    config = repo.root / args.config
    if not config.is_file():
        raise InputError(f"{args.config} not found", path=str(config), hint="`abeq gate --init` writes one.")
    from ..documents import read_text_file

    project = parse(read_text_file(config, what=args.config), str(config))  # bounded, by reading
    listed = repo.git(["ls-files", "-z"], what="the files here").split("\0")
    touched = {str(Path(f).resolve().relative_to(repo.root)) for f in args.files if Path(f).exists()}
    code = EXIT_PASS
    for entry in project.entries:
        for path in [p for p in listed if p and entry.matches(p)]:
            ts_path = entry.set_for(path)
            if touched and not ({path, ts_path, args.config} & touched or _travels(path, touched)):
                continue
            try:
                doc = load_document(repo.root / path, "original")
                ts = sets.load(repo.root / ts_path)
            except AbeqError as e:
                print(f"abeq: {e.render()}", file=sys.stderr)
                code = EXIT_BAD_INPUT
                continue
            cov = sets.coverage(doc.text, ts, allow_thin=entry.settings.allow_thin)
            uncovered = [s for s in cov.sections_identified if s not in cov.sections_covered]
            said = sets.confirmation_problem(ts, doc.hash) or "confirmed"
            print(f"{path}: {len(ts.cases)} cases, coverage {cov.coverage_pct:.0f}% · {said}")
            # unconfirmed, or edited after its confirmation: the gate refuses it in CI, so the commit is
            # refused here; confirmed for another version of the document is a rewrite's normal state
            if problem := sets.confirmation_problem(ts):
                print(
                    f"abeq: {ts_path}: {problem}\n  A person who has read its cases confirms it: abeq "
                    f"check-set --original {path} --transfer-set {ts_path} --confirm",
                    file=sys.stderr,
                )
                code = EXIT_BAD_INPUT
            if not cov.runnable:
                print(
                    f"abeq: {ts_path}: {cov.warnings[0] if cov.warnings else 'not runnable'}", file=sys.stderr
                )
                code = EXIT_BAD_INPUT
            elif entry.require_coverage and uncovered:
                print(
                    f"abeq: {path}: no case of {ts_path} exercises {', '.join(uncovered)} "
                    "(require_coverage)\n"
                    "  Add a case that does (exercises_sections), then confirm the set again.",
                    file=sys.stderr,
                )
                code = EXIT_BAD_INPUT
    return code


def _travels(doc_path: str, touched: set[str]) -> bool:
    """Whether a touched file sits in the document's folder (a skill's files, an import beside it)."""
    folder = str(Path(doc_path).parent)
    return folder != "." and any(t.startswith(folder + "/") for t in touched)
