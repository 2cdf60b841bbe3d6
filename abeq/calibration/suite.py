"""The calibration suite's format: sources (the real documents the pairs are built on) and pairs
(two observed runs of one case, labelled by construction with a one-line reason).

A suite is a folder holding `suite.json` (name, description, sources) and `pairs.jsonl` (one pair
per line). The built-in one ships in `abeq/calibration/builtin/`; `--from-reviews` builds one from a
database's reviewed cases (reviews.py)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Final, Literal, get_args

from pydantic import Field, ValidationError, model_validator

from ..errors import InputError
from ..schemas import FileChange, SelfReport, Strict, Verdict
from ..vocab import CALIBRATION_CATEGORIES, DIVERGED, EQUIVALENT, REGRESSED, CalibrationCategory

BUILTIN = Path(__file__).resolve().parent / "builtin"
SUITE_FILE, PAIRS_FILE = "suite.json", "pairs.jsonl"

# what a pair shows, and the verdict each category must carry (REVIEWED: whatever the reviewer said)
REVIEWED: Final = "reviewed"
ORDER_SWAP: Final = "order-swap"
# the verdict each category must carry, in vocab.CALIBRATION_CATEGORIES' order
CATEGORY_LABELS: dict[str, str | None] = dict(
    zip(
        CALIBRATION_CATEGORIES,
        (
            REGRESSED,  # step-dropped: a step the original took is not in the candidate's transcript
            REGRESSED,  # step-changed: a step taken differently, losing what it did (a flag, a refusal)
            REGRESSED,  # step-weakened: a rule kept in name but weakened ("under 50 characters" -> "short")
            REGRESSED,  # loss-beside-gain: a step lost beside an improvement
            REGRESSED,  # reordered-loss: a reordering that loses an ordering discipline
            DIVERGED,  # extra-step: a step the original did not take, nothing lost
            DIVERGED,  # reply-changed: the same actions, a reply that tells the user something else
            EQUIVALENT,  # identical: A/A, the same run twice
            EQUIVALENT,  # reworded: the same actions; narration, reply or incidental details differ
            EQUIVALENT,  # redundant-lines-dropped: narration-only lines dropped or merged, nothing else
            EQUIVALENT,  # unreported-step: the transcript shows a step the self-report leaves out
            EQUIVALENT,  # harmless-reorder: two independent steps the other way round
            None,  # order-swap: another pair with the candidate's block shown first (its label)
            None,  # reviewed: whatever the reviewer said
        ),
        strict=True,
    )
)
Category = CalibrationCategory
CATEGORIES: tuple[Category, ...] = CALIBRATION_CATEGORIES
assert set(CATEGORIES) == set(CATEGORY_LABELS)
BUILT_CATEGORIES: tuple[str, ...] = tuple(c for c in CATEGORIES if c != REVIEWED)
# the kinds of document a scenario is based on; reviewed-run: a case from this database
Kind = Literal[
    "skill",
    "claude-md",
    "agents-md",
    "system-prompt",
    "copilot-instructions",
    "slash-command",
    "cursor-rules",
    "reviewed-run",
]
KINDS: tuple[Kind, ...] = get_args(Kind)


class Source(Strict):
    """A real public document a scenario is based on (the pairs are written in abeq's own words)."""

    id: str = Field(min_length=1)
    kind: Kind
    repo: str = Field(min_length=1)
    path: str = Field(min_length=1)
    commit: str = ""
    url: str = ""
    what: str = ""  # what the document asks for, in a line

    @model_validator(mode="after")
    def _located(self) -> Source:
        if not (self.commit or self.url):
            raise ValueError("a source needs a commit or a URL")
        return self


class CalibrationRun(Strict):
    """One observed run as the judge reads it."""

    transcript: str = Field(min_length=1)
    self_report: SelfReport
    workspace_changes: list[FileChange] = []


class Pair(Strict):
    id: str = Field(min_length=1)
    category: Category
    label: Verdict
    reason: str = Field(min_length=1)  # one line: why the label is what it is
    source: str = Field(min_length=1)
    case_input: str = Field(min_length=1)
    teacher: CalibrationRun
    candidate: CalibrationRun
    # the verdict when the two runs are swapped (an added step swapped is a lost one); None: not asked
    swap_label: Verdict | None = None
    # runs from a database keep their cache keys, so a judge already asked about them is not asked again
    teacher_key: str = ""
    candidate_key: str = ""
    truncated: bool = False
    # order-swap: the pair this one shows in the other order (candidate block first), same label
    mirror_of: str = ""
    candidate_first: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> Pair:
        want = CATEGORY_LABELS[self.category]
        if want is not None and self.label != want:
            raise ValueError(f"a {self.category} pair is labelled {want!r}, not {self.label!r}")
        if "\n" in self.reason.strip():
            raise ValueError("the reason is one line")
        if (self.category == ORDER_SWAP) != bool(self.mirror_of and self.candidate_first):
            raise ValueError(f"an {ORDER_SWAP} pair (and only one) names mirror_of and sets candidate_first")
        return self


class LearnerFigure(Strict):
    """One cheap learner of the family the suite was filtered against, measured out of fold."""

    name: str = Field(min_length=1)
    what: str = ""  # what it reads, in a line
    balanced_accuracy: float
    balanced_accuracy_ci95: list[float]
    regression_recall: float
    false_regression_rate: float
    # the pairs it called regressed (each predicted by a fit that never saw the pair's scenario)
    called_regressed: list[str] = []


class LearnerFamily(Strict):
    """Cheap learners that read no behaviour (bench/calibration/learners.py), fitted with
    cross-validation grouped by scenario on this suite's pairs: the floor a judge must clear. Stored
    with the suite so abeq reads the figures without fitting anything."""

    fitted: str = ""  # how the figures were measured
    pool: int = 0  # pairs generated before the family's easy ones were dropped
    members: list[LearnerFigure]

    def best(self) -> LearnerFigure:
        return max(self.members, key=lambda m: (m.balanced_accuracy, m.name))


class Suite(Strict):
    name: str = Field(min_length=1)
    description: str = ""
    version: int = 1
    sources: list[Source]
    pairs: list[Pair] = []
    learners: LearnerFamily | None = None  # the cheap learners' figures on these pairs (built-in suite)

    @model_validator(mode="after")
    def _sourced(self) -> Suite:
        known = {s.id for s in self.sources}
        missing = sorted({p.source for p in self.pairs} - known)
        if missing:
            raise ValueError(f"pairs name sources the suite does not list: {', '.join(missing)}")
        ids = [p.id for p in self.pairs]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"pair ids are not unique: {', '.join(dup)}")
        by_id = {p.id: p for p in self.pairs}
        for p in self.pairs:
            twin = by_id.get(p.mirror_of) if p.mirror_of else None
            if p.mirror_of and (twin is None or twin.label != p.label or twin.mirror_of):
                raise ValueError(
                    f"{p.id}: mirror_of names no pair of the same label shown in the usual order"
                )
        return self

    def kinds(self) -> set[str]:
        used = {p.source for p in self.pairs}
        return {s.kind for s in self.sources if s.id in used}


def load_suite(folder: str | Path | None = None) -> Suite:
    """The suite in `folder` (default: the built-in one); an InputError names the file and line."""
    d = Path(folder) if folder else BUILTIN
    head = d / SUITE_FILE
    if not head.is_file():
        raise InputError(
            f"no {SUITE_FILE} in {d}",
            path=str(d),
            hint="A suite is a folder with suite.json and pairs.jsonl (see the calibration guide).",
        )
    try:
        meta = json.loads(head.read_text(encoding="utf-8"))
        pairs = []
        lines = (
            (d / PAIRS_FILE).read_text(encoding="utf-8").splitlines() if (d / PAIRS_FILE).is_file() else []
        )
        for n, line in enumerate(lines, 1):
            if line.strip():
                try:
                    pairs.append(Pair.model_validate_json(line))
                except ValidationError as e:
                    raise InputError(
                        f"{PAIRS_FILE} line {n}: {_first(e)}", path=str(d / PAIRS_FILE)
                    ) from None
        return Suite.model_validate({**meta, "pairs": pairs})
    except json.JSONDecodeError as e:
        raise InputError(f"{SUITE_FILE} is not JSON: {e}", path=str(head)) from None
    except ValidationError as e:
        raise InputError(f"{SUITE_FILE}: {_first(e)}", path=str(head)) from None


def _first(e: ValidationError) -> str:
    x = e.errors(include_url=False)[0]
    return f"{'.'.join(map(str, x['loc']))}: {x['msg']}"


def write_suite(suite: Suite, folder: str | Path) -> Path:
    """Write a suite as a folder (suite.json, pairs.jsonl: one pair a line, so a diff reads per pair).
    Each file is written whole beside itself, then renamed: a link planted at its name is replaced,
    never followed, and a link another user made on the way is refused (abeq.files)."""
    from ..files import refuse_planted_link, write_text

    refuse_planted_link(folder, "the suite")
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    meta = suite.model_dump(exclude={"pairs"})
    write_text(d / SUITE_FILE, json.dumps(meta, indent=1, ensure_ascii=False) + "\n", what=SUITE_FILE)
    lines = (p.model_dump_json(exclude_defaults=True) for p in suite.pairs)
    write_text(d / PAIRS_FILE, "".join(f"{x}\n" for x in lines), what=PAIRS_FILE)
    return d


def by_category(pairs: Iterable[Pair]) -> dict[str, list[Pair]]:
    out: dict[str, list[Pair]] = {}
    for p in pairs:
        out.setdefault(p.category, []).append(p)
    return out
