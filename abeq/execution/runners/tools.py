"""The tools a tools-mode runner gets over its copy of the case's workspace.

list_files, read_file and search look; write_file writes in the copy (refused, and recorded, in the
read-only instruction-file variant); run_command executes nothing: it answers from the case's
scripted `command_outputs` (the first pattern that matches, like gate answers) or says the command
is not available here. Every answer is bounded, and no path can leave the copy.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

from pydantic import Field, ValidationError

from ...models.http import redact
from ...schemas import Case, Strict, ToolStep

MAX_READ_CHARS = 20_000
MAX_LIST = 500
MAX_MATCHES = 100
MAX_TRACE_RESULT = 4_000  # characters of a tool's answer kept in the stored trace
NOT_AVAILABLE = (
    "not available here: this run executes no commands, and the case has no scripted output for this one"
)
READ_ONLY = (
    "refused: this run is read-only (instruction-file variant). Nothing was written; state the edit "
    "you would make in your report instead."
)


class ListFiles(Strict):
    """List the files under a folder of the repository (recursively)."""

    path: str = Field(".", description="folder, relative to the repository root")


class ReadFile(Strict):
    """Read a text file of the repository."""

    path: str = Field(description="file, relative to the repository root")


class Search(Strict):
    """Find the lines that match a regular expression, in the files under a folder."""

    pattern: str = Field(description="a regular expression (Python syntax)")
    path: str = Field(".", description="folder or file to search, relative to the repository root")


class WriteFile(Strict):
    """Create a file, or replace its whole content."""

    path: str = Field(description="file, relative to the repository root")
    content: str = Field(description="the complete new content")


class RunCommand(Strict):
    """Run a shell command in the repository root and get its output."""

    command: str


TOOLS: dict[str, type[Strict]] = {
    "list_files": ListFiles,
    "read_file": ReadFile,
    "search": Search,
    "write_file": WriteFile,
    "run_command": RunCommand,
}


def tool_specs() -> list[dict]:
    """The tools in OpenAI's function-calling form, their parameters derived from the classes above
    (each call gets its own copy: a provider's adapter may change what it is given)."""
    return json.loads(_specs_json())


@functools.cache
def _specs_json() -> str:  # a class's schema does not change while the process runs: derived once
    out = []
    for name, cls in TOOLS.items():
        schema = cls.model_json_schema()
        schema.pop("title", None)
        schema.pop("description", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        out.append(
            {
                "type": "function",
                "function": {"name": name, "description": (cls.__doc__ or "").strip(), "parameters": schema},
            }
        )
    return json.dumps(out)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[… cut: {len(text) - limit:,} more characters]"


class ToolBox:
    """Runs the tools of one run on its workspace copy and keeps the trace."""

    def __init__(self, root: Path, case: Case, read_only: bool):
        self.root, self.case, self.read_only = root.resolve(), case, read_only
        self.trace: list[ToolStep] = []

    def _inside(self, rel: str) -> Path | None:
        target = (self.root / rel).resolve()
        return target if target == self.root or self.root in target.parents else None

    def refuse(self, name: str, arguments: dict, why: str) -> str:
        self.trace.append(
            ToolStep(step=len(self.trace) + 1, tool=name, arguments=arguments, result=why, refused=True)
        )
        return why

    def call(self, name: str, raw_arguments: str) -> str:
        """Run one tool call (arguments as the model sent them, JSON text); the answer for the model."""
        try:
            arguments = json.loads(raw_arguments or "{}")
            if not isinstance(arguments, dict):
                raise ValueError("arguments are not a JSON object")
        except ValueError as e:
            return self.refuse(
                name, {"raw": str(raw_arguments)[:500]}, f"error: arguments are not valid JSON ({e})"
            )
        cls = TOOLS.get(name)
        if cls is None:
            return self.refuse(
                name, arguments, f"error: no tool named {name!r}; the tools are {', '.join(TOOLS)}"
            )
        try:
            args = cls.model_validate(arguments)
        except ValidationError as e:
            msg = "; ".join(
                f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors(include_url=False)
            )
            return self.refuse(name, arguments, f"error: {msg}")
        refused = False
        if name == "write_file" and self.read_only:
            result, refused = READ_ONLY, True
        elif isinstance(args, RunCommand):
            result = self._command(args.command)
        else:
            assert isinstance(args, (ListFiles, ReadFile, Search, WriteFile))  # every other tool has a path
            path = self._inside(args.path)
            if path is None:
                result, refused = f"refused: {args.path} is outside the repository", True
            else:
                result = getattr(self, f"_{name}")(path, args)
        self.trace.append(
            ToolStep(
                step=len(self.trace) + 1,
                tool=name,
                arguments=arguments,
                result=redact(_clip(result, MAX_TRACE_RESULT)),
                refused=refused,
            )
        )
        return result

    # ------------------------------------------------------------ the tools
    def _rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix()

    def _files(self, path: Path) -> list[Path]:
        if path.is_file():
            return [path]
        return sorted(
            p for p in path.rglob("*") if p.is_file() and ".git" not in p.relative_to(self.root).parts
        )

    def _list_files(self, path: Path, args: ListFiles) -> str:
        if not path.exists():
            return f"error: {args.path} does not exist"
        files = [self._rel(p) for p in self._files(path)]
        more = f"\n[… {len(files) - MAX_LIST} more files]" if len(files) > MAX_LIST else ""
        return "\n".join(files[:MAX_LIST]) + more if files else "(no files)"

    def _read_file(self, path: Path, args: ReadFile) -> str:
        if not path.is_file():
            return f"error: {args.path} is not a file"
        from ...files import read_regular

        data = read_regular(path, MAX_READ_CHARS * 4, follow=True)  # never a whole huge file
        if isinstance(data, str):
            return f"error: {args.path} is not a regular file"
        clipped = "" if data is not None else "\n[… the rest of the file cut]"
        if data is None:
            with open(path, "rb") as f:
                data = f.read(MAX_READ_CHARS * 4)
        if b"\x00" in data:
            return f"error: {args.path} is not a text file"
        return _clip(data.decode("utf-8", errors="replace"), MAX_READ_CHARS) + clipped

    def _search(self, path: Path, args: Search) -> str:
        if not path.exists():
            return f"error: {args.path} does not exist"
        try:
            rx = re.compile(args.pattern)
        except re.error:
            rx = re.compile(re.escape(args.pattern))  # not a valid expression: taken literally
        hits = []
        for f in self._files(path):
            try:
                lines = f.read_text(encoding="utf-8").splitlines()
            except (UnicodeDecodeError, OSError):
                continue
            hits += [f"{self._rel(f)}:{i}: {ln[:300]}" for i, ln in enumerate(lines, 1) if rx.search(ln)]
            if len(hits) > MAX_MATCHES:
                break
        more = "\n[… more matches cut]" if len(hits) > MAX_MATCHES else ""
        return "\n".join(hits[:MAX_MATCHES]) + more if hits else "(no match)"

    def _write_file(self, path: Path, args: WriteFile) -> str:
        if path.is_dir():
            return f"error: {args.path} is a folder"
        path.parent.mkdir(parents=True, exist_ok=True)
        existed = path.exists()
        path.write_text(args.content, encoding="utf-8")
        return f"{'replaced' if existed else 'created'} {args.path} ({len(args.content):,} characters)"

    def _command(self, command: str) -> str:
        for scripted in self.case.command_outputs:
            try:
                hit = re.search(scripted.pattern, command) is not None
            except re.error:
                hit = scripted.pattern in command
            if hit:
                return f"exit code {scripted.exit_code}\n{scripted.output}"
        return NOT_AVAILABLE
