"""Cache keys: a version prefix plus canonical JSON of everything that changes an output, and nothing else."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

from ..models.spec import ModelSpec
from ..schemas import Case
from ..sets.confirm import case_identity
from .grading import grader_prompt
from .judge import judge_prompt
from .runner import runner_prompt

KEY_VERSION = "abeq-key-v1"


def cache_key(kind: str, parts: dict) -> str:
    """Version prefix + canonical JSON of everything that changes the output, and nothing else."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(f"{KEY_VERSION}|{kind}|{blob}".encode()).hexdigest()


def runner_key(
    doc_hash: str,
    case: Case,
    variant: str,
    spec: ModelSpec,
    ts_hash: str,
    sample: int = 0,
    mode_parts: dict | None = None,
) -> str:
    """`mode_parts`: what the runner mode adds or (as None) removes (RunnerMode.key_parts)."""
    parts = {
        "doc": doc_hash,
        "case": case_identity(case),
        "variant": variant,
        "prompt": runner_prompt(variant).ref,
        "sampling": spec.sampling(),
        "transfer_set": ts_hash,
        "sample": sample,
    }
    for k, v in (mode_parts or {}).items():
        if v is None:
            parts.pop(k, None)
        else:
            parts[k] = v
    return cache_key("runner", parts)


def judge_spec(base: ModelSpec, sample: int, samples: int) -> ModelSpec:
    """Independent judge samples: each its own seed, and some temperature when more than one is asked."""
    if samples <= 1:
        return base
    return replace(base, seed=(base.seed or 0) + sample, temperature=max(base.temperature, 0.7))


def judge_key(original_key: str, candidate_key: str, spec: ModelSpec, sample: int, truncated: bool) -> str:
    return cache_key(
        "judge",
        {
            "original": original_key,
            "candidate": candidate_key,
            "prompt": judge_prompt().ref,
            "sampling": spec.sampling(),
            "sample": sample,
            "truncated": truncated,
        },
    )


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
