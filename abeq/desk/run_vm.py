"""What the Run page shows, computed without Streamlit: the run settings kept per session, the
RunSettings the form's choices make (as the CLI's options make one), the estimate, why a start is
refused (the run's own preflight), and a run's progress as metrics. The page (and `run_panels`) only
draw these."""

from __future__ import annotations

import time
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from ..api import DESK_LABELS, estimate_run
from ..documents import Document, detect_variant
from ..execution.checks.checks import model_checks
from ..execution.checks.code_trust import CodeItem
from ..execution.estimate import describe_estimate, estimate_calls
from ..execution.options import BY_NAME, OPTIONS
from ..execution.preflight import Preflight, preflight, samples_warnings
from ..execution.settings import RunSettings
from ..models import DEFAULT_MODEL
from ..results.store.store import Store
from ..schemas import TransferSet
from ..sets import confirmation_problem
from ..timestamps import ago, local
from ..vocab import RUNNER_MODES, VARIANTS
from .metric import Metric
from .policy import OPEN, Policy
from .queries import Progress
from .render import md

CALLS_HELP = (
    "Calls resolved in this attempt (made, from the cache, or failed after retries) / calls the run needs."
)
CANCEL_HELP = (
    "No new model call starts; HTTP calls in flight are dropped; a reply the embedded model is generating "
    "is finished, then discarded. What finished is kept: Resume continues the run."
)


@dataclass(frozen=True)
class Control:
    """A setting the Run page has a widget for, under the setting's own name in session state. For a
    setting whose default (in the options table) is None: `shown`, what the widget starts at, and
    `blank`, the widget's value that reads back as None. `mode`: read only in this runner mode (a
    command typed, then another mode picked, is not used). `sticky`: kept when the page is left."""

    shown: Any = None
    blank: Any = ""
    mode: str = ""
    sticky: bool = True


# Every setting of the options table (abeq.execution.options) is one of three things on the desk, and
# a test holds the three to the table, so a new setting is a decision here:
CONTROLS: dict[str, Control] = {  # a control of the Run page
    "runner_model": Control(DEFAULT_MODEL),
    "judge_model": Control(DEFAULT_MODEL),  # blank: the runner model, as the CLI's default
    "api_base": Control(""),
    "variant": Control(sticky=False),  # preselected from the original's file name (variant_index)
    "concurrency": Control(),
    "judge_samples": Control(),
    "runner_samples": Control(),
    "aa": Control(),
    "fail_fast": Control(),
    "min_judge_recall": Control(0.0, 0.0),  # 0: no minimum (as the CLI without --min-judge-recall)
    "require_judge_recall": Control(),
    "runner_mode": Control("chat"),
    "runner_cmd": Control("", mode="command"),
    "runner_cmd_version": Control(mode="command"),
    "trust_code": Control(sticky=False),  # a grant: ticked for each run (TRUST_KEY)
}
GIVEN = ("allow_thin", "review")  # what the page knows otherwise: the set's thin acceptance, the review
DEFAULTED = (  # no control: a run from the desk takes the table's default (the CLI and abeq.toml set them)
    "judge_api_base",
    "timeout",
    "max_retries",
    "max_tokens",
    "fresh",
    "gate",  # a gate profile applies to a report, not to a run: the Review page chooses it
    "runner_timeout",
    "runner_max_steps",
    "runner_max_tokens",
    "runner_env",
    "unsandboxed",  # the command line's grants alone: a desk offers neither (policy.check)
    "check_env",
    "backoff_base",
)


def _start(name: str) -> Any:
    """What a control starts at: the table's default (as the widget shows a None one)."""
    default = BY_NAME[name].default
    return CONTROLS[name].shown if default is None else default


# Streamlit drops a widget's state when its page is left; these settings outlive that (per session).
STICKY = {name: _start(name) for name, c in CONTROLS.items() if c.sticky}
MIN_RECALL_LABEL = "Minimum judge recall"
THIN = (
    "This set is thin (fewer than 5 cases, or a case type missing), so a run would be refused. On "
    "**Transfer set**, add cases, or tick **Accept a thin set** and press **Confirm** (the report "
    "records it)."
)


def restore_settings(state: MutableMapping, policy: Policy = OPEN) -> None:
    """Give every setting the value kept from the page's last visit (or its default); a choice the
    desk's policy does not offer (kept from before it was started so) falls back to its default."""
    for k, default in STICKY.items():
        if k not in state:
            state[k] = state.get(f"keep:{k}", default)
    if state["runner_mode"] not in runner_modes(policy):
        state["runner_mode"] = STICKY["runner_mode"]
    bases = policy.api_bases()
    if bases is not None and bases and state["api_base"] not in ("", *bases):
        state["api_base"] = ""
    for k in ("runner_model", "judge_model"):
        if (listed := model_choices(policy)) and state[k] not in listed:
            state[k] = listed[0]


def runner_modes(policy: Policy) -> list[str]:
    """The runner modes the form offers: the command mode only where the desk allows commands."""
    return [m for m in RUNNER_MODES if m != "command" or policy.allows_commands()]


def model_choices(policy: Policy) -> list[str] | None:
    """The models the form offers as a list, when the desk allows only named ones (no pattern);
    None: any model string may be typed (and is checked at Start)."""
    if policy.bounds is None:
        return None
    allowed = list(policy.bounds.allowed_models())
    return None if any(c in m for m in allowed for c in "*?[") else allowed


def policy_text(policy: Policy) -> str:
    """What the Run page says about the desk's bounds (Markdown; '' on a desk of one's own)."""
    if not policy.bounded:
        return ""
    return (
        f"**What runs on this desk may use**, as allowed by {md(policy.operator)}, who started `abeq app` "
        "(a signed-in reviewer is not the desk's operator): "
        + "; ".join(policy.lines())
        + ". Anything else is refused at Start."
    )


def keep_settings(state: MutableMapping) -> None:
    for k in STICKY:
        state[f"keep:{k}"] = state[k]


def variant_index(original_name: str) -> int:
    """The variant the form preselects: the one the original's file name suggests."""
    return list(VARIANTS).index(detect_variant(original_name))


def desk_value(state: Mapping, name: str) -> Any:
    """A control's value: the widget's, else the one kept from the Run page's last visit, else its start."""
    return state.get(name, state.get(f"keep:{name}", _start(name)))


def desk_settings(
    state: Mapping, ts: TransferSet, review: str | None = None, leave: tuple[str, ...] = ()
) -> RunSettings:
    """The run the desk's choices describe, made from the options table: each setting with a control
    read from session state (`desk_value`), the set's thin acceptance and the review given, every
    other setting (and those in `leave`) at the table's default. The Run page's run and the Transfer
    set page's mutation test (no review; `leave`: what a mutation test takes no part of) both come
    from here, so their calls are keyed alike."""
    mode = desk_value(state, "runner_mode")
    chosen: dict[str, Any] = {"allow_thin": ts.thin_accepted, "review": review}
    for o in OPTIONS:
        c = CONTROLS.get(o.name)
        if c is None or o.name in leave or (c.mode and mode != c.mode):
            continue
        value = desk_value(state, o.name)
        if o.default is None and (value is None or value == c.blank):
            continue
        chosen[o.name] = o.kind(value) if o.kind in (int, float, bool) else value
    return RunSettings(**{k: v for k, v in chosen.items() if k not in leave})


TRUST_KEY = "trust_code"  # the Run page's box: run the set's code in this run


@dataclass
class Gate:
    """Whether Start is refused, and the errors that say why."""

    unconfirmed_why: str
    thin: bool
    code: list[CodeItem] = field(default_factory=list)  # the set's scripts
    code_trusted: bool = True  # no scripts, the box ticked, or this code in the user's trust file
    judge: str = ""  # what the minimum judge recall says of the judge ("": met, or none asked)
    judge_refused: bool = False  # and the form asked to refuse rather than warn

    @property
    def refused(self) -> bool:
        return bool(self.unconfirmed_why) or self.thin or not self.code_trusted or self.judge_refused

    def errors(self, trust_offered: bool = True) -> list[str]:
        out = [THIN] if self.thin else []
        if self.judge_refused:
            out.append(md(self.judge) + ", so this run is refused (**Refuse a judge below the minimum**).")
        if not self.code_trusted:
            out.append(
                f"This set's checks run code on this machine ({len(self.code)} script(s), listed "
                "below) that you have not trusted, so this run is refused. "
                + (
                    "Read them, then tick **Run the set's code**."
                    if trust_offered
                    else "This desk does not offer to run a set's code: the person who started it can "
                    "trust exactly this code (`abeq check-set --confirm --trust-code`), or start the desk "
                    "with `--allow-trust-code`."
                )
            )
        if why := self.unconfirmed_why:
            out.append(
                md(f"{why[0].upper()}{why[1:]}") + ", so this run is refused: no runner call happens before "
                "a person accepts the cases. Read them on **Transfer set** and press **Confirm**."
            )
        return out


def start_gate(
    original: Document, ts: TransferSet, settings: RunSettings | None = None, store: Store | None = None
) -> Gate:
    """Whether Start is refused, read from the run's preflight (the one the library runs); `store`:
    where the judge's calibration is read for the minimum judge recall."""
    settings = settings or RunSettings()
    cfg = settings.config(settings.variant or "skill")
    return gate_of(preflight(original, ts, cfg, labels=DESK_LABELS, models=False, store=store))


def gate_of(checked: Preflight) -> Gate:
    """The Run page's words for a preflight: the set's confirmation, thinness, code and the judge's
    minimum (a refusal of the models reaches the page when Start is pressed)."""
    thin = not checked.unconfirmed and not checked.coverage.runnable
    return Gate(
        checked.unconfirmed, thin, checked.code, checked.code_trusted, checked.judge, checked.judge_refused
    )


def code_lines(items: list[CodeItem]) -> list[str]:
    """One line per script of the set, as `abeq check-set` lists them (escaped: a stranger wrote them)."""
    return [md(i.where()) for i in items]


def stored_document(store: Store, d: dict) -> Document:
    """A stored document as a run takes it (a skill with its folder's files)."""
    return Document(d["name"], d["content"], files=tuple(sorted(store.inputs.document_files(d).items())))


def documents(store: Store, original: dict, candidate: dict) -> tuple[Document, Document]:
    """The two stored documents as a run takes them (a skill with its folder's files)."""
    return stored_document(store, original), stored_document(store, candidate)


def estimate_lines(
    store: Store, original: dict, candidate: dict, ts: TransferSet, cfg: RunSettings
) -> list[str]:
    """The estimate in sentences: the CLI's own (the cache consulted) once the set is confirmed;
    before that, the calls only."""
    # a small N, the embedded model's samples (a RunConfig, as a test may pass, is resolved already)
    sampled = samples_warnings(cfg.config(VARIANTS[0]) if isinstance(cfg, RunSettings) else cfg)
    if not confirmation_problem(ts, original["hash"]):
        est = estimate_run(store, *documents(store, original, candidate), ts, cfg)
        return describe_estimate(est, len(ts.cases), cfg.aa) + sampled
    graded = sum(1 for c in ts.cases if model_checks(c))
    est = estimate_calls(len(ts.cases), 1, cfg.judge_samples, cfg.aa, graded, cfg.runner_samples)
    return [
        f"At most {est['total']} model calls ({est['runner_calls']} runner, {est['judge_calls']} judge"
        f"{', A/A replays included' if cfg.aa else ''}"
        + (f", {est['grading_calls']} check grading" if graded else "")
        + "); the original's cached transcripts are reused, so later rounds make fewer."
    ] + sampled


def progress_metrics(p: Progress) -> tuple[list[Metric], list[Metric]]:
    """A run's progress as two rows of metrics (the second row's fifth place holds Cancel)."""
    first = [
        Metric("Cases done", f"{p.done}/{p.total}", help="judged or errored"),
        Metric("Runner calls", f"{p.runner_done}/{p.runner_needed}", help=CALLS_HELP),
        Metric("Judge calls", f"{p.judge_done}/{p.judge_needed}", help=CALLS_HELP),
        Metric("Cache hits", p.cache_hits),
        Metric(
            "Errors",
            p.errors,
            f"{p.failed_calls} call(s) failed" if p.failed_calls else None,
            help="Cases that errored (a case without a verdict fails the gate); calls that failed after "
            "their retries.",
        ),
    ]
    second = [
        Metric("Elapsed", f"{p.elapsed:.0f} s"),
        Metric(
            "Time left (est.)",
            eta_text(eta_range(p)),
            help="The calls still to resolve, at this run's pace so far, as the range of the last "
            f"{ETA_WINDOW:g} s of estimates (a pace read second by second swings with each batch of calls; "
            "cache hits still to come make it shorter).",
        ),
        Metric("Tokens", f"{p.tokens:,}"),
        Metric(
            "Cost",
            "unknown" if p.unpriced else f"${p.cost:.4f}",  # a partial sum is not the cost
            f"{p.unpriced} unpriced call(s)" if p.unpriced else None,
            help="Calls litellm has no price for are counted, never shown as $0.",
        ),
    ]
    return first, second


def prompt_cache_text(p: Progress) -> str:
    """What the provider's prompt cache did for this run, or '' when it did nothing."""
    if not (p.cache_read_tokens or p.cache_write_tokens):
        return ""
    return (
        f"Provider prompt cache: {p.cache_read_tokens:,} prompt tokens read from it, "
        f"{p.cache_write_tokens:,} written" + ("" if p.unpriced else f"; it saved ${p.cache_saved:.4f}") + "."
    )


def open_run_line(r: dict) -> str:
    """One unfinished run (a row of runs.unfinished) in a line of Markdown."""
    return (
        f"**Run {r['id']}** · round {r['round']} · candidate {md(r['candidate'])} · "
        f"**{md(r['label'])}** · {r['counts']['done']} of {r['counts']['total']} cases done · "
        f"started {md(local(r['started_at']))} ({ago(r['started_at'])})"
    )


ETA_WINDOW = 30.0  # seconds of estimates the time left is given as a range of
_ETAS: dict[int, list[tuple[float, float, float]]] = {}  # run -> [(when, eta, elapsed)]


def eta_range(p: Progress, now: float | None = None) -> tuple[float, float] | None:
    """The time left as (low, high): the lowest and highest estimate of the last ETA_WINDOW seconds
    (shared by every session of this desk). One reading swings with each batch of calls (539, 804,
    389, 569 s a few seconds apart); their range is what the pace can tell."""
    if p.eta is None or not p.active:
        return None
    now = time.time() if now is None else now
    # a resumed run is a new attempt (its elapsed time starts again): its pace is its own
    kept = [x for x in _ETAS.get(p.run_id, []) if now - x[0] <= ETA_WINDOW and x[2] <= p.elapsed + 1]
    if len(_ETAS) > 64:
        _ETAS.clear()
    _ETAS[p.run_id] = seen = [*kept, (now, p.eta, p.elapsed)]
    etas = [e for _, e, _ in seen]
    return min(etas), max(etas)


def eta_text(span: tuple[float, float] | None) -> str:
    """A range in round figures: "40–60 s", "about 7 min", "6–13 min" ("—" when unknown)."""
    if span is None:
        return "—"
    lo, hi = span
    if hi < 90:
        a, b = int(lo // 10 * 10), int(-(-hi // 10) * 10)
        return f"~{b} s" if a == b else f"{a}–{b} s"
    if hi - lo < 60:  # one reading, or readings within a minute of each other
        return f"about {round((lo + hi) / 120)} min"
    return f"{max(1, int(lo // 60))}–{int(-(-hi // 60))} min"


def shown_run(started_here: int | None, latest: Mapping[str, Any] | None) -> int | None:
    """The run the Run page follows: the newest of the one this session started and the review's
    latest (a run started since by another desk or a terminal replaces a finished one of ours)."""
    ids = [i for i in (started_here, (latest or {}).get("id")) if i]
    return max(ids) if ids else None
