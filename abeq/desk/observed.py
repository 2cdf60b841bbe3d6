"""What the Review page shows beside the transcripts when a run acted in a workspace: per arm, the
files it changed (with their diffs), its tool trace, and the self-report fields it did not give."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..results.reports.observed import case_observed
from ..results.store.store import Store
from ..vocab import RUNNER_MODES

LABELS = {"original": "Original (teacher)", "candidate": "Candidate"}
MODE_LABELS = dict(
    zip(
        RUNNER_MODES,  # chat, tools, command
        (
            "chat: one runner-model call narrates",
            "tools: the model acts on a copy of the case's workspace",
            "command: any agent CLI in that copy",
        ),
    )
)
COMMAND_NOTE = (
    "The command runs as you, through the shell, in a temporary copy of each case's workspace; nothing "
    "else is sandboxed (it can read your files and reach the network). Run untrusted agents in a "
    "container: see docs/guides/runner-modes.md."
)


@dataclass
class Arm:
    label: str
    changes: list[tuple[str, str, str]] = field(default_factory=list)  # (status path, diff, note)
    trace: list[dict] = field(default_factory=list)  # one row per tool call
    not_reported: list[str] = field(default_factory=list)


def arms(store: Store, row) -> list[Arm]:
    """The two arms of a case ([] when neither observed anything beyond its transcript)."""
    found = case_observed(store, row)
    if not found:
        return []
    out = []
    for arm in ("original", "candidate"):
        o = found.get(arm, {})
        out.append(
            Arm(
                LABELS[arm],
                [
                    (f"{c['status']}: {c['path']}", c.get("diff", ""), c.get("note", ""))
                    for c in o.get("workspace_changes", [])
                ],
                [
                    {
                        "step": s["step"],
                        "tool": s["tool"] + (" (refused)" if s.get("refused") else ""),
                        "arguments": ", ".join(
                            f"{k}={str(v)[:80]!r}" for k, v in s.get("arguments", {}).items()
                        ),
                        "result": s.get("result", "")[:300],
                    }
                    for s in o.get("tool_trace", [])
                ],
                o.get("not_reported", []),
            )
        )
    return out
