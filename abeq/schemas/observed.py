"""What a run in a workspace observed besides its transcript: the files it changed and the tools it
called. Stored with the runner result, shown on Review beside the transcript, given to the judge."""

from __future__ import annotations

from typing import Any, Literal

from .core import RunnerReply, Strict

NOT_REPORTED = "not reported"
ChangeStatus = Literal["added", "changed", "deleted"]  # what a run did to a file of its workspace


class FileChange(Strict):
    """One file the run added, changed or deleted in its copy of the workspace."""

    path: str
    status: ChangeStatus
    diff: str = ""  # a unified diff, cut to a bound; "" when the file is not text
    note: str = ""  # why there is no (whole) diff: binary, too large, cut


class ToolStep(Strict):
    """One tool call of a tools-mode run, with what it answered (cut to a bound)."""

    step: int
    tool: str
    arguments: dict[str, Any] = {}
    result: str = ""
    refused: bool = False  # a write in a read-only run, a path outside the workspace, a step over the limit


class ObservedRun(RunnerReply):
    """A runner's reply as the judge and the reviewer see it: the transcript and six-field self-report,
    plus what the run did to its workspace, its tool calls, and which self-report fields the runner
    never gave (a runner command that printed no self-report: those fields say "not reported")."""

    workspace_changes: list[FileChange] = []
    tool_trace: list[ToolStep] = []
    not_reported: list[str] = []

    def extras(self) -> dict:
        """What is stored beside the transcript and self-report (empty for a plain chat run)."""
        return self.model_dump(
            include={"workspace_changes", "tool_trace", "not_reported"}, exclude_defaults=True
        )
