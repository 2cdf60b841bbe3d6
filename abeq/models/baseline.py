"""`baseline/<name>`: judges that understand nothing, shipped so every calibration has a floor.

A judge is worth its calls only if it beats a check that reads no behaviour at all. These three are
registered like any provider and answer only the equivalence judge's prompt:

- `baseline/always-regressed` calls every pair regressed (perfect recall, no specificity);
- `baseline/length` reads only the transcripts' lengths: the candidate's under 90% of the
  original's is a regression, over 110% a difference, else equivalent;
- `baseline/self-report` reads only the self-reports' "followed:" lines: a line of the original's
  the candidate's list lacks (by shared words) is a regression, an extra one a difference.

The built-in calibration suite's own test fails when any of them reaches a balanced accuracy above
0.6 (tests/test_calibration.py); `abeq calibrate` prints their figures beside the judge measured.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from ..prompts import read_data_blocks
from ..vocab import DIVERGED, EQUIVALENT, REGRESSED

SHORTER, LONGER = 0.9, 1.1  # baseline/length's bounds, as a share of the original's transcript
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]{2,}")


def _run(blocks: dict, name: str) -> dict:
    try:
        run = json.loads(blocks.get(name) or "{}")
    except json.JSONDecodeError:
        return {}
    return run if isinstance(run, dict) else {}


def always_regressed(original: dict, candidate: dict) -> tuple[str, str]:
    return REGRESSED, "baseline: every pair is called regressed"


def by_length(original: dict, candidate: dict) -> tuple[str, str]:
    o, c = len(str(original.get("transcript", ""))), len(str(candidate.get("transcript", "")))
    ratio = c / max(1, o)
    if ratio < SHORTER:
        return REGRESSED, f"baseline: the candidate's transcript is {ratio:.0%} of the original's length"
    if ratio > LONGER:
        return DIVERGED, f"baseline: the candidate's transcript is {ratio:.0%} of the original's length"
    return EQUIVALENT, ""


def _followed(run: dict) -> list[set[str]]:
    raw = str((run.get("self_report") or {}).get("steps_followed_skipped", ""))
    lines = [ln.split(":", 1)[1] for ln in raw.splitlines() if ln.strip().lower().startswith("followed:")]
    return [set(_WORD.findall(ln.lower())) for ln in lines]


def _missing(mine: list[set[str]], theirs: list[set[str]]) -> int:
    return sum(1 for a in mine if not any(len(a & b) / max(1, len(a | b)) >= 0.5 for b in theirs))


def by_self_report(original: dict, candidate: dict) -> tuple[str, str]:
    o, c = _followed(original), _followed(candidate)
    lost, added = _missing(o, c), _missing(c, o)
    if lost:
        return REGRESSED, f"baseline: {lost} step(s) of the original's self-report are not in the candidate's"
    if added:
        return DIVERGED, f"baseline: the candidate's self-report names {added} more step(s)"
    return EQUIVALENT, ""


def action_lines(transcript: str) -> list[str]:
    """The lines a run says or does (tool output, indented under its call, left out)."""
    return [x.strip() for x in transcript.splitlines() if x.strip() and not x[:1].isspace()]


def line_diff(original: str, candidate: str) -> tuple[str, str]:
    """A rule that reads no behaviour, kept as the floor the built-in suite is built against (it
    scored 96% on the suite before it, bench/calibration/learners.py): regressed when some, but
    fewer than half, of the original's action lines are missing verbatim from the candidate's."""
    lines = action_lines(original)
    there = set(action_lines(candidate))
    missing = sum(1 for x in lines if x not in there)
    if 0 < missing < len(lines) / 2:
        return REGRESSED, f"line-diff: {missing} of {len(lines)} original lines missing verbatim"
    return EQUIVALENT, ""


BASELINES: dict[str, Callable[[dict, dict], tuple[str, str]]] = {
    "always-regressed": always_regressed,
    "length": by_length,
    "self-report": by_self_report,
}

BASELINE_JUDGES: tuple[str, ...] = tuple(f"baseline/{n}" for n in BASELINES)


def check_name(rest: str) -> str:
    """Why `baseline/<rest>` cannot be served ("" when it can)."""
    if rest in BASELINES:
        return ""
    return f"no baseline judge '{rest}': there are {', '.join(f'baseline/{n}' for n in BASELINES)}"


def respond(model: str, messages: list[dict]) -> str:
    """The judge reply of baseline `model` to these messages (an error object for any other prompt)."""
    user = "\n".join(str(m.get("content") or "") for m in messages if m["role"] == "user")
    blocks = read_data_blocks(user)
    judge = BASELINES.get(model.split("/", 1)[-1])
    if judge is None or "original_run" not in blocks or "candidate_run" not in blocks:
        return json.dumps({"error": f"baseline/{model}: a baseline only answers the equivalence judge"})
    verdict, delta = judge(_run(blocks, "original_run"), _run(blocks, "candidate_run"))
    return json.dumps(
        {
            "verdict": verdict,
            "behaviour_delta": "" if verdict == EQUIVALENT else delta,
            "original_directness": 3,
            "candidate_directness": 3,
            "interpretation_notes": "a baseline judge: it reads no behaviour",
        }
    )


def make_baseline_handler(base):
    """The litellm handler of `baseline/…`."""
    from .handlers import fill_response, in_process_handler

    def reply(model, messages, model_response, optional_params):
        text = respond(model, messages)
        pt = sum(len(str(m.get("content") or "")) for m in messages) // 4
        return fill_response(model_response, f"baseline/{model}", text, pt, max(1, len(text) // 4))

    return in_process_handler(base, reply)
