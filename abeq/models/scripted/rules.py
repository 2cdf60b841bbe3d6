"""The rules the scripted model (abeq.models.scripted) answers abeq's own prompts by, reading their
<data> blocks: as a runner it follows the document's list items in order (stopping at an
unanswered "ask the user" gate); as a judge it matches the two runs' steps by their content words,
so a candidate that drops a rule really is caught as regressed by the real pipeline; as the check
grader it passes a natural-language check on a run when every content word of the check occurs in
the part of the run it reads; it drafts, compares and writes mutants alike. They are also what
tells which purpose a call serves (`read`). They live beside the provider, not in it, because they
know every prompt abeq sends: a new prompt changes them, never the provider. A test double: its
judgements mean nothing about real models.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ...prompts import read_data_blocks
from ...vocab import DIVERGED, EQUIVALENT, REGRESSED, STOPPED
from .samples import kept_steps

_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_GATE = re.compile(r"\b(ask|confirm with|check with|wait for)\b.*\b(user|reviewer|author|human)\b", re.I)
_VAGUE = re.compile(
    r"\b(use (your )?judgment|as appropriate|if needed|where sensible|as needed|"
    r"when it makes sense|reasonable|if it seems)\b",
    re.I,
)
_STOP = set(
    """that this with from into when then than they them their there have will would should could
must also only each every your what which about before after other some such more most none just
very like make made does done over under same both were been being using used a an the and or""".split()
)


@dataclass
class Prompt:
    """A call as the rules read it: its data blocks and the purpose they show (None: not abeq's)."""

    blocks: dict[str, str]
    purpose: str | None


def purpose_of(blocks: dict, tools: list | None = None) -> str | None:
    """Which of abeq's prompts this is, by its data blocks."""
    if (tools and "document_path" in blocks) or ("document" in blocks and "case_input" in blocks):
        return "runner"
    if "original_run" in blocks:
        return "judge"
    if "run_a" in blocks and "checks" in blocks:
        return "grader"
    if "original_document" in blocks:
        return "drafter"
    if "output_a" in blocks:
        return "comparator"
    if "document_to_mutate" in blocks:
        return "mutator"
    return None


def read(messages: list[dict], tools: list | None = None) -> Prompt:
    user = "\n".join(str(m.get("content") or "") for m in messages if m["role"] == "user")
    blocks = read_data_blocks(user)
    return Prompt(blocks, purpose_of(blocks, tools))


def reply(prompt: Prompt, messages: list[dict], schema: dict | None, tools: list | None, tool_choice) -> dict:
    """The assistant message the rules give: {"content": text}, or tool calls in tools mode."""
    blocks = prompt.blocks
    if tools and "document_path" in blocks:
        from .tools import agent_turn

        return agent_turn(messages, blocks, tool_choice, run_rules)
    if "document" in blocks and "case_input" in blocks:
        return {"content": json.dumps(run_rules(blocks))}
    if "original_run" in blocks:
        return {"content": json.dumps(judge_rules(blocks))}
    if "run_a" in blocks and "checks" in blocks:
        return {"content": json.dumps(grade_rules(blocks))}
    if "original_document" in blocks:
        limit = (((schema or {}).get("properties") or {}).get("cases") or {}).get("maxItems")
        return {"content": json.dumps(draft_rules(blocks, limit))}
    if "output_a" in blocks:
        return {"content": json.dumps(compare_rules(blocks))}
    if "document_to_mutate" in blocks:
        from .mutants import mutate_rules

        return {"content": json.dumps(mutate_rules(blocks))}
    return {"content": json.dumps({"error": "scripted model: unrecognised prompt"})}


def respond(messages: list[dict], schema: dict | None = None) -> str:
    """The reply text the rules give to these messages (no model, no queue: the rules alone)."""
    return reply(read(messages), messages, schema, None, None).get("content") or ""


# ---------------------------------------------------------------- runner
def doc_steps(doc: str) -> list[tuple[str, str]]:
    """(section, list item) pairs in document order, outside code fences."""
    out, section, fence = [], "", False
    for line in doc.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        if fence:
            continue
        h = _HEADING.match(line)
        if h:
            section = h.group(1)
            continue
        m = _ITEM.match(line)
        if m:
            out.append((section, m.group(1)))
    return out


def _match_gate(text: str, gate_responses: list[dict]) -> dict | None:
    for g in gate_responses:
        pat = g.get("pattern", "")
        try:
            if pat and re.search(pat, text, re.I):
                return g
        except re.error:
            if pat.lower() in text.lower():
                return g
    return None


def run_rules(blocks: dict) -> dict:
    doc, case = blocks["document"], blocks["case_input"].strip()
    try:
        gates = json.loads(blocks.get("gate_responses") or "[]")
    except json.JSONDecodeError:
        gates = []
    followed, hits, ambiguities = [], [], []
    for section, step in kept_steps(doc_steps(doc)):  # "{kept K/N}" items: by the call's seed
        if _GATE.search(step):
            g = _match_gate(step, gates)
            hits.append(
                {
                    "gate_type": "confirmation",
                    "prompt_text": step,
                    "response_used": g["response"] if g else STOPPED,
                    "section": section,
                }
            )
            if not g:
                break
        followed.append(step)
        vague = _VAGUE.search(step)
        if vague:
            ambiguities.append(f"'{vague.group(0)}' in \"{step}\": took the most literal reading")
    first_line = case.splitlines()[0][:120]
    transcript = f"Task: {first_line}\n" + "\n".join(f"- {s}" for s in followed)
    if hits and hits[-1]["response_used"] == STOPPED:
        transcript += f"\n[stopped at gate: {hits[-1]['prompt_text']}]"
    return {
        "transcript": transcript,
        "self_report": {
            "output_produced": f"Result for '{first_line}' after {len(followed)} step(s).",
            "steps_followed_skipped": "\n".join(f"followed: {s}" for s in followed) or "none",
            "ambiguities": "\n".join(ambiguities) or "none",
            "improvisation": "none",
            "wanted_to_deviate": "none",
            "gates_hit": hits,
        },
    }


# ---------------------------------------------------------------- judge
def _words(text: str) -> set[str]:
    ws = {w.lower().rstrip("s") for w in re.findall(r"[A-Za-z][A-Za-z'-]{3,}", text)}
    return {w for w in ws if w not in _STOP}


def _followed(report: dict) -> list[str]:
    raw = report.get("steps_followed_skipped", "")
    return [ln.split(":", 1)[1].strip() for ln in raw.splitlines() if ln.lower().startswith("followed:")]


def _unmatched(mine: list[str], theirs: list[str]) -> list[str]:
    out = []
    their_words = [
        _words(t) for t in theirs
    ]  # once, not once per pair: the loopback judge is a benchmark's peer
    for s in mine:
        sw = _words(s)
        if not any(len(sw & tw) / max(1, len(sw | tw)) >= 0.34 for tw in their_words):
            out.append(s)
    return out


def _run(blocks: dict, name: str) -> dict:
    try:
        run = json.loads(blocks[name])
        return run if isinstance(run, dict) else {}
    except (json.JSONDecodeError, KeyError):
        return {}


def _directness(report: dict) -> int:
    amb = report.get("ambiguities", "none")
    n = 0 if amb.strip().lower() in ("none", "not reported") else len(amb.splitlines())
    return max(1, 5 - n)


def _steps(run: dict) -> list[str]:
    """The steps a run followed by its self-report; its transcript's lines when it reported none."""
    report = run.get("self_report", {})
    if not str(report.get("steps_followed_skipped", "")).lower().startswith("not reported"):
        return _followed(report)
    return [ln.strip() for ln in str(run.get("transcript", "")).splitlines() if ln.strip()]


def _changes(run: dict) -> dict[str, str]:
    return {c["path"]: c.get("status", "") + c.get("diff", "") for c in run.get("workspace_changes", [])}


def judge_rules(blocks: dict) -> dict:
    ro, rc = _run(blocks, "original_run"), _run(blocks, "candidate_run")
    o, c = ro.get("self_report", {}), rc.get("self_report", {})
    lost = _unmatched(_steps(ro), _steps(rc))
    extra = _unmatched(_steps(rc), _steps(ro))
    # what each run did to its workspace is behaviour too: a file the original wrote and the candidate
    # did not, or wrote otherwise, is a loss (when unsure, regressed); a new file is a difference
    oc, cc = _changes(ro), _changes(rc)
    lost += [f"change {p}" for p in oc if p not in cc]
    lost += [f"write {p} as the original run did" for p in oc if p in cc and oc[p] != cc[p]]
    extra += [f"change {p}" for p in cc if p not in oc]
    if lost:
        verdict, delta = REGRESSED, "The candidate run no longer: " + "; ".join(lost)
    elif extra:
        verdict, delta = DIVERGED, "The candidate run also: " + "; ".join(extra)
    else:
        verdict, delta = EQUIVALENT, ""
    od, cd = _directness(o), _directness(c)
    return {
        "verdict": verdict,
        "behaviour_delta": delta,
        "original_directness": od,
        "candidate_directness": cd,
        "interpretation_notes": f"original: {o.get('ambiguities', 'none')[:200]}; "
        f"candidate: {c.get('ambiguities', 'none')[:200]}",
    }


# ---------------------------------------------------------------- check grader
_META = {"output", "transcript", "response", "include", "mention", "contain", "state", "case"}
_NOT = "It is NOT the case that: "


def _grade(check: str, text: str) -> tuple[bool, str]:
    """A check passes when every content word of it occurs in the text; the evidence is the line
    that shares the most words with it (or the words no line has)."""
    negated = check.startswith(_NOT)
    want = _words(check.removeprefix(_NOT)) - _META
    have = _words(text)
    missing = sorted(want - have)
    best = max(text.splitlines() or [""], key=lambda ln: len(_words(ln) & want))
    ok = not missing
    evidence = f'"{best.strip()[:120]}"' if ok else "no mention of: " + ", ".join(missing)
    return ok != negated, evidence


def grade_rules(blocks: dict) -> dict:
    """Grade each check on run A and run B by reading the part of the run the check names."""
    runs = {}
    for name in ("run_a", "run_b"):
        try:
            runs[name] = json.loads(blocks[name])
        except json.JSONDecodeError:
            runs[name] = {}
    out = {}
    for c in json.loads(blocks.get("checks") or "[]"):
        row: dict[str, bool | str] = {}
        for arm, name in (("a", "run_a"), ("b", "run_b")):
            row[f"{arm}_pass"], row[f"{arm}_evidence"] = _grade(
                c["check"], str(runs[name].get(c["reads"], ""))
            )
        out[c["id"]] = row  # one key per check id, as the reply schema has it
    return out


# ---------------------------------------------------------------- drafting
def draft_rules(blocks: dict, limit: int | None = None) -> dict:
    doc = blocks["original_document"]
    cases: list[dict] = []
    kinds: dict[tuple[str, str], bool] = {}  # (slot, section) already drafted
    for i, (section, step) in enumerate(doc_steps(doc)):
        low = step.lower()
        if _GATE.search(step):
            kind = "edge"
        elif _VAGUE.search(step):
            kind = "adversarial"
        elif re.search(r"\b(skill|tool|hand (it )?off|another)\b", low):
            kind = "composition"
        elif re.search(r"\b(if|when|unless|over|under|more than|less than)\b", low):
            kind = "edge"
        else:
            kind = "happy"
        # A gate gets its own slot: it shares the type "edge" with branches but is a different pass.
        slot = "gate" if _GATE.search(step) else kind
        if kinds.get((slot, section)):
            continue
        kinds[(slot, section)] = True
        gates = []
        if _GATE.search(step):
            gates.append(
                {
                    "gate_id": f"g{i}",
                    "gate_type": "confirmation",
                    "pattern": re.escape(step[:30]),
                    "response": "yes",
                }
            )
        cases.append(
            {
                "id": f"{kind}-{len(cases) + 1}",
                "type": kind,
                "input": f"A request that exercises: {step}",
                "exercises_sections": [section] if section else [],
                "gate_responses": gates,
                "rationale": f"pass: {'gates' if gates else 'rules'}",
            }
        )
    if limit and len(cases) > limit:
        # keep the first case of each type, then the rest in document order, as a person would
        keep = {
            i for i, c in reversed(list(enumerate(cases))) if c["type"] not in {d["type"] for d in cases[:i]}
        }
        keep |= set([i for i in range(len(cases)) if i not in keep][: max(0, limit - len(keep))])
        cases = [cases[i] for i in sorted(keep)[:limit]]
    return {"cases": cases}


# ---------------------------------------------------------------- comparator
def _quality(text: str) -> tuple[int, int]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    content = max(1, min(5, 1 + len(_words(text)) // 15))
    structure = max(1, min(5, 1 + sum(1 for ln in lines if ln.lstrip().startswith(("#", "-", "*", "1.")))))
    return content, structure


def compare_rules(blocks: dict) -> dict:
    a, b = blocks["output_a"], blocks["output_b"]
    (ac, as_), (bc, bs) = _quality(a), _quality(b)
    content = {
        k: {"a": ac, "b": bc, "note": f"{k}: by word content"}
        for k in ("completeness", "accuracy", "usefulness", "clarity", "depth")
    }
    structure = {
        k: {"a": as_, "b": bs, "note": f"{k}: by structure markers"}
        for k in ("organization", "progressive_disclosure", "conciseness", "formatting", "consistency")
    }
    try:
        assertions = json.loads(blocks.get("assertions") or "[]")
    except json.JSONDecodeError:
        assertions = []
    results = []
    for i, item in enumerate(assertions):
        t = item if isinstance(item, str) else item.get("text", "")
        aid = (None if isinstance(item, str) else item.get("id")) or f"a{i + 1}"
        words = _words(t)
        results.append(
            {
                "assertion_id": aid,
                "assertion_text": t,
                "a_result": "PASS" if words & _words(a) else "FAIL",
                "b_result": "PASS" if words & _words(b) else "FAIL",
                "note": "by shared words",
            }
        )
    sa, sb = ac * 0.6 + as_ * 0.4, bc * 0.6 + bs * 0.4
    winner = "A" if sa > sb else "B" if sb > sa else "tie"
    return {
        "winner": winner,
        "reasoning": "scripted: more content and structure wins",
        "rubric_scores": {"content_quality": content, "structural_quality": structure},
        "output_quality": {"a": f"{len(a)} characters", "b": f"{len(b)} characters"},
        "expectation_results": results,
    }
