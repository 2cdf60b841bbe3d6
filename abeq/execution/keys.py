"""Cache keys: a version prefix plus canonical JSON of everything that changes an output, and nothing else."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

from ..models.spec import ModelSpec
from ..schemas import Case
from ..sets.confirmation import case_identity
from .checks.grading import grader_prompt
from .judge import judge_prompt
from .runners.runner import runner_prompt

KEY_VERSION = "abeq-key-v1"
# v2 runner keys hold the case alone: which other cases share the set does not change a case's
# transcript (docs/reference/rules.md, "A case's transcript is the case's own"), so adding a case
# runs only that case's teacher. v1 keys also held the set's hash; rows stored under them stay
# readable (runner_keys).
RUNNER_KEY_VERSION = "abeq-key-v2"


def cache_key(kind: str, parts: dict, version: str = KEY_VERSION) -> str:
    """Version prefix + canonical JSON of everything that changes the output, and nothing else."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(f"{version}|{kind}|{blob}".encode()).hexdigest()


def _runner_parts(
    doc_hash: str, case: Case, variant: str, spec: ModelSpec, sample: int, mode_parts: dict | None, **extra
) -> dict:
    parts = {
        "doc": doc_hash,
        "case": case_identity(case),
        "variant": variant,
        "prompt": runner_prompt(variant).ref,
        "sampling": spec.sampling(),
        **extra,
        "sample": sample,
    }
    for k, v in (mode_parts or {}).items():
        if v is None:
            parts.pop(k, None)
        else:
            parts[k] = v
    return parts


def runner_key(
    doc_hash: str,
    case: Case,
    variant: str,
    spec: ModelSpec,
    *,
    sample: int = 0,
    mode_parts: dict | None = None,
) -> str:
    """The key a runner result is stored under: the document, the case, the model and its sampling,
    the variant, the prompt and the sample; not the set the case belongs to. `mode_parts`: what the
    runner mode adds or (as None) removes (RunnerMode.key_parts)."""
    parts = _runner_parts(doc_hash, case, variant, spec, sample, mode_parts)
    return cache_key("runner", parts, RUNNER_KEY_VERSION)


def legacy_runner_key(
    doc_hash: str,
    case: Case,
    variant: str,
    spec: ModelSpec,
    ts_hash: str,
    sample: int = 0,
    mode_parts: dict | None = None,
) -> str:
    """The v1 key (it also held the set's hash): where results stored before v2 are found."""
    parts = _runner_parts(doc_hash, case, variant, spec, sample, mode_parts, transfer_set=ts_hash)
    return cache_key("runner", parts)


def runner_keys(
    doc_hash: str,
    case: Case,
    variant: str,
    spec: ModelSpec,
    ts_hash: str,
    sample: int = 0,
    mode_parts: dict | None = None,
) -> tuple[str, str]:
    """The keys to look a runner result up under, in order: the current one, then the v1 key of the
    same set, so results stored before the key changed are reused rather than silently paid again.
    (runner_key and legacy_runner_key, from one reading of the case: this is asked on every call.)"""
    parts = _runner_parts(doc_hash, case, variant, spec, sample, mode_parts)
    legacy = {**parts, "transfer_set": ts_hash}  # the v1 parts: the same and the set (keys are sorted)
    if "transfer_set" in (mode_parts or {}):  # a mode part of that name wins, as in legacy_runner_key
        legacy = _runner_parts(doc_hash, case, variant, spec, sample, mode_parts, transfer_set=ts_hash)
    return cache_key("runner", parts, RUNNER_KEY_VERSION), cache_key("runner", legacy)


def sample_spec(spec: ModelSpec, sample: int) -> ModelSpec:
    """The runner of sample `sample` of a document on a case: its own seed (sample 0: the spec's)."""
    return replace(spec, seed=(spec.seed or 0) + sample) if sample else spec


def judge_spec(base: ModelSpec, sample: int, samples: int) -> ModelSpec:
    """Independent judge samples: each its own seed, and some temperature when more than one is asked."""
    if samples <= 1:
        return base
    return replace(base, seed=(base.seed or 0) + sample, temperature=max(base.temperature, 0.7))


def judge_key(
    original_key: str,
    candidate_key: str,
    spec: ModelSpec,
    sample: int,
    truncated: bool,
    candidate_first: bool = False,
) -> str:
    parts = {
        "original": original_key,
        "candidate": candidate_key,
        "prompt": judge_prompt().ref,
        "sampling": spec.sampling(),
        "sample": sample,
        "truncated": truncated,
    }
    if candidate_first:  # another prompt text (the blocks the other way round); absent: keys as before
        parts["candidate_first"] = True
    return cache_key("judge", parts)


def grading_key(
    original_key: str, candidate_key: str, checks: list[dict], spec: ModelSpec, shown_as_a: str
) -> str:
    """The natural-language checks of one case graded on these two runs, in this blind order."""
    return cache_key(
        "grading",
        {
            "original": original_key,
            "candidate": candidate_key,
            "checks": checks,
            "prompt": grader_prompt().ref,
            "sampling": spec.sampling(),
            "a": shown_as_a,
        },
    )
