"""`abeq gate`: each changed document run as original = the base's, candidate = the head's, over the
base's cases and those the head adds, in one store; one combined outcome.

Everything that can be refused is refused for every document before the first model call (a set
the pull request changed without a confirmation for its new content, a missing set, a bad model
string), so a gate never spends money on half its documents and then stops.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from ..documents.git_source import Repo
from ..errors import AbeqError, InputError, NotConfirmedError
from ..vocab import DIVERGED, EQUIVALENT, FINISHED, REGRESSED
from .changes import CHANGED, REMOVED, Revisions, Target

EXIT_ORDER = (2, 3, 1, 0)  # which document's exit code the gate's is: bad input first, then errors


@dataclass
class Outcome:
    """One gated document: its run's report (None when not run) and exit code."""

    target: Target
    run_id: int | None = None
    report: Any = None  # results.report.RunReport
    exit: int = 0
    passed: bool = True
    sizes: tuple[int, int] = (0, 0)  # characters of original and candidate
    tokens: tuple[int, int] = (0, 0)
    calls: dict = field(default_factory=dict)
    decided: list[dict] = field(default_factory=list)  # cases a reviewer decided: not run, no call

    def counts(self) -> dict[str, int]:
        """equivalent / diverged / regressed / errored over the run's cases and the decided ones."""
        s = self.report.report["summary"] if self.report is not None else {}
        out = {
            EQUIVALENT: s.get("equivalents", 0),
            "diverged": s.get("divergences", 0),
            "regressed": s.get("regressions", 0),
            "errored": len(self.report.failed) if self.report is not None else 0,
        }
        for d in self.decided:
            out[{EQUIVALENT: EQUIVALENT, DIVERGED: "diverged"}.get(d["verdict"], "regressed")] += 1
        return out


@dataclass
class GateResult:
    revisions: Revisions
    targets: list[Target]
    outcomes: list[Outcome]

    @property
    def exit_code(self) -> int:
        codes = {o.exit for o in self.outcomes}
        return next((c for c in EXIT_ORDER if c in codes), 0)

    def as_json(self, store) -> dict:
        from ..results.reports.report import gate_result

        docs = []
        for t in self.targets:
            o = next((o for o in self.outcomes if o.target is t), None)
            entry: dict[str, Any] = {"path": t.path, "state": t.state, "transfer_set": t.transfer_set}
            if t.base_path:
                entry["renamed_from"] = t.base_path
            if t.state == CHANGED:
                entry["changed_files"] = t.changed_files
                entry["dropped_files"] = t.dropped
                entry["renamed_files"] = [list(r) for r in t.renamed]
            if t.set_changes:
                entry["set_changes"] = t.set_changes
            if t.not_judged:
                entry["not_judged"] = t.not_judged
            if o and o.report is None and not o.decided:
                entry.update(exit_code=o.exit, passed=o.passed)
            if o and o.decided:
                entry["decided"] = o.decided
            if o and o.report is None and o.decided:
                entry.update(exit_code=o.exit, passed=o.passed)
            if o and o.report is not None:
                entry.update(
                    run_id=o.run_id,
                    exit_code=o.exit,
                    passed=o.passed,
                    gate=gate_result(o.report, o.target.entry.settings.gate),
                    report=o.report.report,
                    errors=o.report.errors,
                )
            docs.append(entry)
        return {
            "base": self.revisions.base,
            "head": self.revisions.head,
            "exit_code": self.exit_code,
            "documents": docs,
        }


def set_confirmation(ts, target: Target, base_hash: str, head_hash: str, set_name: str) -> None:
    """A set the pull request changed must carry a person's confirmation of its new content (for the
    base's or the head's document); an unchanged one, a confirmation of its content at all."""
    from ..sets.confirmation import confirmation_problem

    problem = confirmation_problem(ts)
    if not problem and target.set_changed and ts.document_hash not in (base_hash, head_hash):
        problem = (
            "the transfer set was confirmed for a version of the document this pull request does not hold"
        )
    if not problem:
        return
    changed = "this pull request changed it, so " if target.set_changed else ""
    raise NotConfirmedError(
        f"{problem}: {changed}a person who has read its cases must confirm them before the gate runs",
        path=set_name,
        hint=(
            "The pull request's author or a reviewer runs, in a checkout of the head: "
            f"abeq check-set --original {target.path} --transfer-set {target.transfer_set} --confirm "
            "(or Confirm on the desk's Transfer set page), and commits the confirmed set."
        ),
    )


@dataclass
class Planned:
    """A changed document ready to run: its prepared run (None when reviewers decided every case)."""

    target: Target
    prepared: Any  # api.PreparedRun | None
    original: Any  # documents.Document
    candidate: Any
    decided: list[dict]


def prepare(
    repo: Repo,
    revs: Revisions,
    targets: list[Target],
    store,
    settings_for,
    decisions=None,
    shard: tuple[int, int] | None = None,
):
    """Every changed document's run prepared (stored, nothing called), or the first refusal. The
    cases are the base's set and the head's (`cases_to_run`): a pull request can add cases, never
    drop or weaken one. A case a reviewer decided for the same original, candidate and case content
    is left out of the run; a change the runner mode cannot see is not judged (`unseen`).
    `shard` (k, n): this process runs its share of each document's cases (`abeq gate --shard k/n`),
    each run shared with the other shards' processes (found by its settings, as `abeq run --shard`)."""
    from ..api import document, prepare_run, transfer_set
    from ..documents import detect_variant
    from ..sets.confirmation import set_hash
    from ..sets.coverage_report import require_runnable
    from .overrides import Decisions  # reads cases (the schemas): not on the "nothing changed" path

    decisions = decisions or Decisions({})
    planned = []
    for t in targets:
        if t.state != CHANGED:
            continue
        set_name = f"git:{revs.head_rev}:{t.transfer_set}"
        head_has, base_has = (
            t.transfer_set in repo.tree(revs.head),
            t.original_set in repo.tree(revs.base),
        )
        if not head_has and not base_has:
            raise InputError(
                f"the transfer set of {t.path} does not exist at {revs.head_rev}",
                path=t.transfer_set,
                hint="Write and confirm its cases (abeq draft-set, abeq check-set --confirm), or fix "
                "transfer_set in abeq.toml.",
            )
        orig = document(f"git:{revs.base}:{t.original_path}", "original")
        variant = t.entry.settings.variant or detect_variant(orig.name)
        settings = settings_for(t.entry.settings)  # with the grants of the person running the gate
        t.not_judged = unseen(t, settings.config(variant).mode.kind, variant)
        if t.not_judged:  # no call: a verdict on what the runner never saw would be a guess
            planned.append(Planned(t, None, orig, orig, []))
            continue
        cand = document(f"git:{revs.head}:{t.path}", "candidate", variant == "instruction-file")
        head_ts = transfer_set(f"git:{revs.head}:{t.transfer_set}") if head_has else None
        base_ts = transfer_set(f"git:{revs.base}:{t.original_set}") if base_has else None
        if head_ts is not None:
            set_confirmation(head_ts, t, orig.hash, cand.hash, set_name)
        ts, t.set_changes = cases_to_run(base_ts, head_ts)
        if settings.trust_code:
            trusted_code_only(repo, revs, t, ts, base_ts)
        decided = []
        for c in ts.cases:
            if d := decisions.for_case(orig.hash, cand.hash, c):
                decided.append({**d, "case_id": c.id})
        if decided:  # the whole set is held to the run's rules; the run then makes the rest
            require_runnable(orig.text, ts, settings.allow_thin, set_name)
            done = {d["case_id"] for d in decided}
            ts = ts.model_copy(update={"cases": [c for c in ts.cases if c.id not in done]})
            settings = settings.given(allow_thin=True)
        p = None
        if ts.cases:
            review = review_for(store, t.path, orig.hash, set_hash(ts))
            try:
                p = prepare_run(
                    orig,
                    cand,
                    ts,
                    store=store,
                    confirm=True,
                    settings=settings.given(variant=variant, review=review),
                    shard=shard,
                )
            except AbeqError as e:
                e.message = f"{t.path}: {e.message}"
                raise
            p.engine.sources = {
                "original": f"git:{revs.base}:{t.original_path}",
                "candidate": f"git:{revs.head}:{t.path}",
                "transfer_set": f"git:{revs.head}:{t.transfer_set}"
                if head_has
                else f"git:{revs.base}:{t.original_set}",
            }
            if head_has and base_has and any(t.set_changes.values()):
                p.engine.sources["base_transfer_set"] = f"git:{revs.base}:{t.original_set}"
            store.log.update_run(p.run_id, config=_with_sources(store, p))
        planned.append(Planned(t, p, orig, cand, decided))
    return planned


def unseen(t: Target, mode: str, variant: str) -> str:
    """Why a change is not judged ("" when it is): a chat runner is shown a skill's SKILL.md alone,
    so a change to any other file of its folder never reaches the model."""
    if variant != "skill" or mode != "chat":
        return ""
    skill_md = {t.path, t.original_path}
    folders = [posixpath.dirname(p) for p in (t.path, t.original_path)]

    def shown(f: str) -> str:  # from the skill's folder (the base's, for a file the head dropped)
        return next((f[len(d) + 1 :] for d in folders if d and f.startswith(d + "/")), f)

    hidden = [shown(f) for f in t.changed_files if f not in skill_md]
    if not hidden:
        return ""
    return (
        f'{", ".join(hidden)} changed, a chat runner sees SKILL.md alone — set runner_mode = "tools" '
        "or an agent command for it"
    )


def _case_content(case) -> str:
    """What a run of a case depends on, as the set's hash counts it (its id, type and sections too)."""
    import json

    from ..sets.confirmation import case_identity

    body = {**case.model_dump(include={"id", "type", "exercises_sections"}), **case_identity(case)}
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def cases_to_run(base, head) -> tuple[Any, dict[str, list[str]]]:
    """The cases a gate runs: the base's set, each case in its base form, and the cases the head adds;
    with the ids the pull request added, removed and changed. A case the pull request removes or
    edits still runs as the base has it: the set's author could otherwise drop the very case that
    catches their regression and confirm the weaker set themselves. The removal takes effect once
    merged."""
    if base is None:  # a set new in this pull request: nothing of the base's to keep
        return head, {}
    if head is None:
        return base, {"added": [], "removed": [c.id for c in base.cases], "changed": []}
    was = {c.id: c for c in base.cases}
    now = {c.id: c for c in head.cases}
    added = [c for c in head.cases if c.id not in was]
    changes = {
        "added": [c.id for c in added],
        "removed": [i for i in was if i not in now],
        "changed": [i for i in was if i in now and _case_content(was[i]) != _case_content(now[i])],
    }
    return base.model_copy(update={"cases": [*base.cases, *added]}), changes


def trusted_code_only(repo: Repo, revs: Revisions, t: Target, ts, base_ts) -> None:
    """`abeq gate --trust-code` trusts the code the base already holds, byte for byte: the pull
    request's author wrote any other, and a gate must not run it with the CI's secrets. New or
    changed code is refused naming the set file's line."""
    from ..execution.checks.code_trust import code_items

    def key(i) -> tuple[str, str, str]:
        return (i.language, i.file, i.code)

    known = {key(i) for i in code_items(base_ts)} if base_ts is not None else set()
    text = ""
    if t.transfer_set in repo.tree(revs.head):
        text = repo.read(revs.head, t.transfer_set).decode("utf-8", errors="replace")
    new = [i for i in code_items(ts, text=text) if key(i) not in known]
    if new:
        i = new[0]
        at = f"{t.transfer_set}:{i.line}" if i.line else t.transfer_set
        more = f" (and {len(new) - 1} more)" if len(new) > 1 else ""
        raise InputError(
            f"{at}: case {i.case_id}, check {i.check}: this {i.language} {i.role}"
            + (f" ({i.file})" if i.file else "")
            + f" is new or changed in this pull request{more}; abeq gate --trust-code trusts only code "
            f"byte-identical at the merge base ({revs.base[:12]})",
            hint="Run the gate without --trust-code (the set's code is then refused unless you trusted "
            "it on this machine), or merge the code after review first.",
        )


def review_for(store, path: str, original_hash: str, ts_hash: str) -> str:
    """The review a gated document's run goes in: the one named after its path, so `abeq history
    PATH`, `abeq override` and the desk's Review and History find the gate's runs. A review's rounds
    share one original and one set of cases; when the base's document or the cases differ from those
    of the runs PATH holds, those runs keep their review under `PATH @ ORIGINAL·SET` (each hash's
    first 8 characters) and PATH becomes the review of this original and set again (its earlier runs
    back in it). The renaming is one exclusive transaction; two gates of one path over different bases
    or sets at the same moment on a shared store can still meet between it and the run's own review
    check, and the later one then exits 2 naming the review (running it again passes)."""

    def kept_as(original: str, ts: str) -> str:
        return f"{path} @ {original[:8]}·{ts[:8]}"

    with store.log.exclusive():
        now = store.inputs.review(path)
        runs = store.log.runs(now["id"]) if now else []
        if now is None or not runs:
            return path
        last = runs[-1]
        if (last["original_hash"], last["transfer_set_hash"]) == (original_hash, ts_hash):
            return path
        name = kept_as(last["original_hash"], last["transfer_set_hash"])
        if store.inputs.review(name) is not None:  # only by hand: keep both, apart
            name += f" #{now['id']}"
        store.inputs.rename_review(now["id"], name)
        earlier = store.inputs.review(kept_as(original_hash, ts_hash))
        if earlier is not None:
            store.inputs.rename_review(earlier["id"], path)
    return path


def _with_sources(store, p) -> str:
    """The run's stored config with where its inputs were read (git:COMMIT:PATH by role)."""
    import json

    cfg = json.loads(store.log.run(p.run_id)["config"] or "{}")
    cfg["sources"] = p.engine.sources
    return json.dumps(cfg, ensure_ascii=False, sort_keys=True)


def run_all(planned: list[Planned], *, on_progress=None, cancel=None) -> list[Outcome]:
    """Make each prepared run's calls; one Outcome per document, reviewers' decisions counted in."""
    out = []
    for pl in planned:
        p = pl.prepared
        out.append(outcome(pl, p.run(on_progress=on_progress, cancel=cancel) if p is not None else None))
    return out


def outcome(pl: Planned, rr) -> Outcome:
    """A document's Outcome from its run's report (None: reviewers decided every case)."""
    from ..documents import estimate_tokens
    from ..results.reports.report import exit_code, gate_result

    t, p = pl.target, pl.prepared
    if t.not_judged:  # exit 2: the gate could not judge this change as abeq.toml configures it
        return Outcome(t, exit=2, passed=False)
    gate = t.entry.settings.gate
    lost = any(d["verdict"] == REGRESSED for d in pl.decided)
    code, passed, calls = 1 if lost else 0, not lost, {}
    if p is not None and rr is not None:
        code, passed = exit_code(rr, gate), gate_result(rr, gate)["pass"] and not lost
        code = code if code else (1 if lost else 0)
        calls = p.store.log.call_stats(p.run_id)
    return Outcome(
        t,
        p.run_id if p is not None else None,
        rr,
        code,
        passed,
        (len(pl.original.text), len(pl.candidate.text)),
        (estimate_tokens(pl.original.text)[0], estimate_tokens(pl.candidate.text)[0]),
        calls,
        pl.decided,
    )


def removals(targets: list[Target]) -> list[Outcome]:
    """A configured document the pull request deletes fails (exit 1): every case it passed is lost.
    The base's abeq.toml must stop listing it first (read at the base, the pull request cannot)."""
    return [Outcome(t, exit=1, passed=False) for t in targets if t.state == REMOVED]


def shares_landed(planned: list[Planned], store, shard: tuple[int, int] = (1, 1)) -> list[Outcome] | None:
    """`abeq gate --shard`: every document's Outcome read whole from the store, for exactly one
    shard: the first to find each document's run finished claims the report in the store (one
    exclusive transaction: shards finishing together cannot both claim it) and gets the Outcomes;
    the others, and every shard while another's share is still out, get None. A re-run makes new
    runs, so each attempt is reported once."""
    import json

    from ..results.reports.report import build_report

    runs = [pl.prepared.run_id for pl in planned if pl.prepared is not None]
    if not runs:  # reviewers decided every case: nothing ran, the first shard reports
        claimed = shard[0] == 1
    else:
        with store.log.exclusive():
            rows = [store.log.run(r) or {} for r in runs]
            cfg = json.loads(rows[0].get("config") or "{}")
            claimed = all(r.get("status") == FINISHED for r in rows) and "gate_reported_by" not in cfg
            if claimed:
                cfg["gate_reported_by"] = f"shard {shard[0]}/{shard[1]}"
                store.log.update_run(runs[0], config=json.dumps(cfg, ensure_ascii=False, sort_keys=True))
    if not claimed:
        return None
    return [outcome(pl, build_report(store, pl.prepared.run_id) if pl.prepared else None) for pl in planned]
