"""The mutation test's estimate against what it used, on the bundled example and two real public skills.

For each document: a transfer set drafted by the scripted model (`scripted/rules`) and confirmed,
then `abeq mutate` from a fresh database, twice: every case on every mutant (`--all-cases`: the
estimate's "at most" against the tokens used) and stopping at each mutant's first kill (the
estimate's "expected" against the tokens used), at concurrency 1 and 8. The real skills are the
verbatim public files in tests/fixtures/real/skills/ (their sources: tests/fixtures/real/SOURCES.md).

Every token count here is the scripted model's: litellm counts the tokens of what the scripted model
was sent and what it wrote, as it does for a provider, but what the scripted runner writes is its
rules' restatement of the document, not a real model's reply. Figures are counts, not times.

Run: .venv/bin/python bench/bench_mutate_estimate.py     Writes bench/results/mutate_estimate.json.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
MODEL = "scripted/rules"
REAL = ROOT / "tests" / "fixtures" / "real" / "skills"
DOCUMENTS = {
    "bundled example (release-notes)": ROOT / "abeq" / "examples" / "release-notes" / "SKILL.md",
    "mcp-builder (anthropics/skills)": REAL / "mcp-builder" / "SKILL.md",
    "rsshub-route-authoring-skill (AboutRSS)": REAL / "rsshub-route-authoring-skill" / "SKILL.md",
}


def cases_for(path: Path):
    """The bundled example's own set; a real skill's drafted by the scripted model. Confirmed."""
    from abeq import sets
    from abeq.documents import load_document
    from abeq.models.spec import ModelSpec
    from abeq.sets.drafting import draft_cases

    doc = load_document(path)
    own = path.parent / "transfer-set.json"
    ts = sets.load(own) if own.exists() else draft_cases(doc.text, ModelSpec(name=MODEL))
    return doc, sets.confirm(ts, doc.hash, thin_accepted=True)


def measure(doc, ts, work: Path, label: str, **kw) -> dict:
    from abeq.mutation.run import prepare_mutation
    from abeq.results.store.store import Store

    store = Store(str(work / f"{label}.db"))
    try:
        prep = prepare_mutation(doc, ts, runner_model=MODEL, store=store, allow_thin=True, **kw)
        est = prep.estimate()
        calls = prep.run().report["calls"]
    finally:
        store.close()
    key = "est_tokens" if kw.get("all_cases") else "expected_tokens"
    return {
        "mutants": est["mutants"],
        "cases": est["cases"],
        "estimated_tokens": est[key],
        "estimated_max_tokens": est["est_tokens"],
        "used_tokens": calls["tokens"],
        "estimated_calls": est["max_calls"] if kw.get("all_cases") else est["expected_calls"],
        "made_calls": calls["made"],
        "ratio": round(est[key] / max(1, calls["tokens"]), 3),
    }


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="abeq-bench-estimate-"))
    rows = []
    for name, path in DOCUMENTS.items():
        doc, ts = cases_for(path)
        for label, kw in (
            ("--all-cases", {"all_cases": True, "concurrency": 1}),
            ("first kill, concurrency 1", {"concurrency": 1}),
            ("first kill, concurrency 8", {"concurrency": 8}),
        ):
            r = {"document": name, "run": label, **measure(doc, ts, work, f"{len(rows)}", **kw)}
            rows.append(r)
            print(
                f"{name:<42}{label:<28} mutants {r['mutants']:>3} cases {r['cases']:>3}  estimated "
                f"{r['estimated_tokens']:>9,} used {r['used_tokens']:>9,}  ({r['ratio'] - 1:+.0%}); calls "
                f"{r['estimated_calls']} est. / {r['made_calls']} made",
                flush=True,
            )
    out = {
        "bench": "mutate_estimate",
        "model": MODEL,
        "note": "token counts are the scripted model's (litellm's count of its prompts and replies)",
        "rows": rows,
        "within_25pct": all(abs(r["ratio"] - 1) <= 0.25 for r in rows),
    }
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "mutate_estimate.json").write_text(json.dumps(out, indent=2) + "\n")
    return 0 if out["within_25pct"] else 1


if __name__ == "__main__":
    sys.exit(main())
