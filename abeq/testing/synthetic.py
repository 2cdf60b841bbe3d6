"""Synthetic material for benchmarks and tests: many-case sets, the example's documents, and a
judged run written straight into a Store.

No model is called: rows go in through Store's own methods, shaped as the engine writes them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

from ..documents import Document, load_document, sha256
from ..execution.keys import cache_key
from ..results.store.rows import RunCaseKey
from ..results.store.store import Store, dumps
from ..schemas import Case, TransferSet
from ..sets.confirmation import confirm
from ..sets.parse import dump, load
from ..vocab import CASE_ERROR, CASE_TYPES, DIVERGED, EQUIVALENT, FINISHED, JUDGED, REGRESSED, Verdict

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "release-notes"

ORIGINAL = (
    "# Release notes\n\n## Steps\n- Gather the merged changes.\n- Group them by type.\n- Strip ticket ids.\n"
)
CANDIDATE = "# Release notes\n\n## Steps\n- Gather merged changes.\n- Group by type.\n"
WORDS = (
    "release notes change fix feature breaking security group entry version user skill step rule "
    "title summary handoff changelog link issue date confirm gate section output"
).split()


def many_cases(n: int, original_text: str | None = None) -> TransferSet:
    """A confirmed transfer set of n cases cycled from the example's, each with a unique id and input."""
    base = load(EXAMPLE / "transfer-set.json")
    cases = []
    for i in range(n):
        c = base.cases[i % len(base.cases)]
        cases.append(c.model_copy(update={"id": f"{c.id}-{i:04d}", "input": f"{c.input}\n\n(request {i})"}))
    text = original_text if original_text is not None else (EXAMPLE / "SKILL.md").read_text(encoding="utf-8")
    return confirm(base.model_copy(update={"cases": cases}), sha256(text))


def documents() -> tuple[Document, Document, Document]:
    """(original, faithful candidate, lossy candidate) of the bundled example."""
    return (
        load_document(EXAMPLE / "SKILL.md"),
        load_document(EXAMPLE / "candidate-faithful.md"),
        load_document(EXAMPLE / "candidate-lossy.md"),
    )


def write_set(path: Path, n: int) -> Path:
    """many_cases(n) as a transfer-set file the CLI can read."""
    path.write_text(dump(many_cases(n)), encoding="utf-8")
    return path


def _text(rng: random.Random, words: int) -> str:
    lines, line = [], []
    for _ in range(words):
        line.append(rng.choice(WORDS))
        if len(line) >= 12:
            lines.append("- " + " ".join(line) + ".")
            line = []
    return "\n".join(lines + ([" ".join(line)] if line else []))


def _report(output: str) -> dict:
    return {
        "output_produced": output,
        "steps_followed_skipped": "followed: every step",
        "ambiguities": "none",
        "improvisation": "none",
        "wanted_to_deviate": "none",
        "gates_hit": [
            {
                "gate_type": "confirmation",
                "prompt_text": "Confirm the version?",
                "response_used": "yes",
                "section": "Steps",
            }
        ],
    }


def synthetic_run(
    store: Store,
    n: int = 1000,
    *,
    review: str = "bench",
    words: int = 400,
    seed: int = 0,
    transcript: Callable[[int, str], str] | None = None,
    error_every: int = 50,
) -> int:
    """A finished run of n cases in its own review; returns the run id.

    `transcript(i, side)` overrides the transcript of case i ("teacher" or "candidate").
    Every `error_every`-th case is stored as an error (0: none).
    """
    rng = random.Random(seed)
    oh = store.inputs.put_document("SKILL.md", ORIGINAL)
    ch = store.inputs.put_document("candidate.md", CANDIDATE)
    cases = [
        Case(
            id=f"case-{i:04d}",
            type=CASE_TYPES[i % 4],
            input=f"synthetic input {i}",
            exercises_sections=["Steps"],
        )
        for i in range(n)
    ]
    ts = confirm(TransferSet(cases=cases), oh)
    tsh = store.inputs.put_transfer_set(ts)
    review_id = store.inputs.upsert_review(review, oh, tsh, "skill")
    run_id = store.log.create_run(
        {
            "review_id": review_id,
            "round": 1,
            "config_key": cache_key("run", {"synthetic": seed}),
            "original_hash": oh,
            "candidate_hash": ch,
            "transfer_set_hash": tsh,
            "runner_model": "synthetic",
            "judge_model": "synthetic",
            "variant": "skill",
            "config": "{}",
            "thin_accepted": 0,
        }
    )
    verdicts: list[Verdict] = [EQUIVALENT, DIVERGED, REGRESSED]
    for i, c in enumerate(cases):
        base: RunCaseKey = {"run_id": run_id, "case_id": c.id, "position": i}
        if error_every and i % error_every == error_every - 1:
            store.log.put_run_case(
                {
                    **base,
                    "status": CASE_ERROR,
                    "error_stage": "runner",
                    "error": "synthetic: rate limited after 5 attempts",
                }
            )
            continue
        keys = {}
        teacher_text = _text(rng, words)
        for side in ("teacher", "candidate"):
            text = (
                transcript(i, side)
                if transcript
                else (teacher_text if side == "teacher" else teacher_text.replace("group", "sort", 3))
            )
            keys[side] = cache_key("synthetic-runner", {"case": c.id, "side": side, "seed": seed})
            store.cache.put_runner_result(
                {
                    "key": keys[side],
                    "doc_hash": oh if side == "teacher" else ch,
                    "case_id": c.id,
                    "model": "synthetic",
                    "variant": "skill",
                    "prompt": "runner-skill@1",
                    "sample": 0,
                    "transcript": text,
                    "self_report": dumps(_report(text[:200])),
                    "gate_truncated": 0,
                    "gate_section": "",
                    "prompt_tokens": 900,
                    "completion_tokens": 300,
                    "cost": 0.0,
                    "latency": 0.1,
                    "attempts": 1,
                }
            )
        verdict = verdicts[i % 3]
        jkey = cache_key("synthetic-judge", {"case": c.id, "seed": seed})
        store.cache.put_judgement(
            {
                "key": jkey,
                "model": "synthetic",
                "prompt": "equivalence-judge@1",
                "sample": 0,
                "verdict": verdict,
                "behaviour_delta": "" if verdict == EQUIVALENT else f"synthetic delta for {c.id}",
                "original_directness": 4,
                "candidate_directness": 3,
                "interpretation_notes": "synthetic notes",
                "raw": "{}",
                "prompt_tokens": 1200,
                "completion_tokens": 80,
                "cost": 0.0,
                "latency": 0.1,
                "attempts": 1,
            }
        )
        store.log.put_run_case(
            {
                **base,
                "status": JUDGED,
                "teacher_key": keys["teacher"],
                "candidate_key": keys["candidate"],
                "judge_keys": json.dumps([jkey]),
                "verdict": verdict,
                "agreement": 1.0,
                "uncertain": 0,
                "gate_truncated": 0,
            }
        )
    run = store.log.run(run_id)
    assert run is not None  # created above
    store.log.update_run(run_id, status=FINISHED, finished_at=run["started_at"])
    return run_id


def example_run_args(
    transfer_set: str | Path,
    db: str | Path,
    url: str,
    candidate: str = "candidate-faithful.md",
    *extra: str,
    quiet: bool = True,
    model: str = "openai/scripted",
) -> list[str]:
    """The arguments of `abeq run` on the bundled example's documents with `transfer_set`, both
    models `model` at `url` (the loopback server), results in `db`; `extra` follow."""
    return [
        "run",
        "--original",
        str(EXAMPLE / "SKILL.md"),
        "--candidate",
        str(EXAMPLE / candidate),
        "--transfer-set",
        str(transfer_set),
        "--runner-model",
        model,
        "--api-base",
        url,
        "--db",
        str(db),
        *(["--quiet"] if quiet else []),
        *extra,
    ]
