"""A stand-in agent CLI for tests: acts on the document it finds, the way a real agent would.

Run by `abeq run --runner-cmd "python tests/agents/changelog_agent.py --log FILE"`. It reads the
runner prompt on stdin and the placed document at $ABEQ_DOCUMENT, follows the document's list items
in order (stopping at an "ask the user" step with no scripted answer), and, when it reaches a step
that says to prepend the notes to `CHANGELOG.md`, writes release notes for the changes in the case
input there, applying only the rules the document states:
  - "internal ticket ids"          → strips tracker keys (PAY-1234, [DATA-882]);
  - "conventional-commit prefixes" → strips feat:, fix(api):, …;
  - "Drop changes … CI"            → drops ci / test / style / dev-dependency changes.
It prints a transcript, then one JSON line {"self_report": …} (not with --no-report), and appends
one line per invocation to --log: case id, variant, the document's path relative to the workspace.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)")
GATE = re.compile(r"\bask\b.*\buser\b", re.I)
TICKET = re.compile(r"\s*(\[[A-Z][A-Z0-9]+-\d+\]|(--\s*)?(closes\s+)?\b(?!CVE-)[A-Z][A-Z0-9]+-\d+\b)")
PREFIX = re.compile(r"^[a-z]+(\([^)]*\))?!?:\s*")
INTERNAL = re.compile(r"^(chore\(ci\)|ci|test|style|build\(deps-dev\))[(:!]")


def data_block(text: str, name: str) -> str:
    m = re.search(rf'<data name="{name}">\n(.*?)\n</data>', text, re.S)
    return m.group(1) if m else ""


def steps(doc: str) -> list[str]:
    out, fence = [], False
    for line in doc.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence and (m := ITEM.match(line)):
            out.append(m.group(1))
    return out


def notes(case: str, doc: str) -> list[str]:
    low = doc.lower()
    entries = []
    for line in case.splitlines():
        m = re.match(r"^\s*(?:[-*]|\d+[.)])?\s*(.+\(#\d+.*)$", line)
        if not m:
            continue
        text = m.group(1).strip()
        if "drop changes" in low and "ci" in low and INTERNAL.match(text):
            continue
        if "conventional-commit prefixes" in low:
            text = PREFIX.sub("", text)
        if "internal ticket ids" in low:
            text = TICKET.sub("", text).strip()
        entries.append(f"- {text}")
    return entries


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--log", required=True)
    p.add_argument("--no-report", action="store_true")
    p.add_argument("--fail", action="store_true", help="exit 1 (a failing agent)")
    p.add_argument("--fail-case", default="", help="exit 1 on this case while --fail-while exists")
    p.add_argument("--fail-while", default="", help="a file: while it exists, --fail-case fails")
    a = p.parse_args()
    prompt = sys.stdin.read()
    doc_path = Path(os.environ["ABEQ_DOCUMENT"])
    with open(a.log, "a", encoding="utf-8") as log:
        rel = doc_path.relative_to(Path.cwd().resolve()).as_posix()
        log.write(f"{os.environ['ABEQ_CASE_ID']}\t{os.environ['ABEQ_VARIANT']}\t{rel}\n")
    flaky = a.fail_case == os.environ["ABEQ_CASE_ID"] and Path(a.fail_while).exists()
    if a.fail or flaky:
        print("agent: something went wrong", file=sys.stderr)
        return 1
    doc = doc_path.read_text(encoding="utf-8")
    case = data_block(prompt, "case_input")
    gates = json.loads(data_block(prompt, "gate_responses") or "[]")
    print(f"Read {rel}")
    followed, hits = [], []
    for step in steps(doc):
        if GATE.search(step):
            answer = next((g["response"] for g in gates if re.search(g["pattern"], step, re.I)), None)
            hits.append(
                {
                    "gate_type": "confirmation",
                    "prompt_text": step,
                    "response_used": answer or "STOPPED (no scripted answer)",
                }
            )
            if answer is None:
                print(f"Stopped at: {step}")
                break
        followed.append(step)
        if "CHANGELOG.md" in step and re.search(r"prepend", step, re.I):
            version = re.search(r"\b\d+\.\d+\.\d+\b", case)
            entries = notes(case, doc)
            old = Path("CHANGELOG.md").read_text(encoding="utf-8") if Path("CHANGELOG.md").exists() else ""
            body = f"## {version.group(0) if version else 'vX.Y.Z'}\n\n" + "\n".join(entries) + "\n"
            Path("CHANGELOG.md").write_text(body + ("\n" + old if old else ""), encoding="utf-8")
            print(f"Wrote CHANGELOG.md ({len(entries)} entries)")
    if not a.no_report:
        report = {
            "output_produced": f"Release notes, {len(followed)} steps followed.",
            "steps_followed_skipped": "\n".join(f"followed: {s}" for s in followed) or "none",
            "ambiguities": "none",
            "improvisation": "none",
            "wanted_to_deviate": "none",
            "gates_hit": hits,
        }
        print(json.dumps({"self_report": report}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
