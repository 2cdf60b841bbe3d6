"""MkDocs hook: fills the generated parts of pages at build time, from the code itself.

A page asks for a part with a marker comment on its own line:
  <!-- generated: cli -->            the CLI reference (docs/gen_cli.py, from each --help)
  <!-- generated: schema NAME -->    the JSON Schema of abeq.schemas.NAME (model_json_schema)
  <!-- generated: layers -->         the layer table, read from tests/test_layout.py's docstring
  <!-- generated: settings -->       the run settings: abeq.RunSettings' fields and their CLI options
  <!-- generated: importers -->      the importers (abeq.sets.importers), as `--from` and the desk name them
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- generated: (\w+)(?: (\w+))? -->$", re.M)


def _gen_cli():
    spec = importlib.util.spec_from_file_location("abeq_docs_gen_cli", ROOT / "docs" / "gen_cli.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _schema(name: str) -> str:
    from abeq import schemas

    model = getattr(schemas, name)
    return "```json\n" + json.dumps(model.model_json_schema(), indent=2) + "\n```"


def _layers() -> str:
    doc = ast.get_docstring(ast.parse((ROOT / "tests" / "test_layout.py").read_text(encoding="utf-8")))
    rows = [line for line in (doc or "").splitlines() if line.startswith("|")]
    if not rows:
        raise ValueError("tests/test_layout.py's docstring has no layer table")
    return "\n".join(rows)


def _settings() -> str:
    from abeq.execution.options import OPTIONS
    from abeq.execution.settings import RunSettings

    rows = ["| setting | CLI option | kind | default | what it does |", "|---|---|---|---|---|"]
    for o in OPTIONS:
        assert o.name in RunSettings.model_fields, o.name  # the table is the model's
        if o.choices:
            kind = " or ".join(f"`{c}`" for c in o.choices)
        else:
            kind = "names" if o.kind == "names" else o.kind.__name__
        option = (f"`{o.flag}`" + (" (repeatable)" if o.kind == "names" else "")) if o.cli else "—"
        default = "—" if o.default in (None, (), "") else f"`{o.default!r}`"
        rows.append(f"| `{o.name}` | {option} | {kind} | {default} | {o.help.replace('|', '/')} |")
    return "\n".join(rows)


def _importers() -> str:
    from abeq.sets.importers import ABEQ_FORMATS, ABEQ_LABEL, IMPORTERS

    rows = ["| `--from` | what it reads |", "|---|---|"]
    rows += [f"| `{i.name}` | {i.label} |" for i in IMPORTERS]
    rows.append(f"| {', '.join(f'`{f}`' for f in ABEQ_FORMATS)} | {ABEQ_LABEL}, by its extension |")
    rows.append("| `detect` (the default) | the first of the above whose detector takes the file, and said |")
    return "\n".join(rows)


def _fill(match: re.Match) -> str:
    kind, arg = match.group(1), match.group(2)
    if kind == "cli":
        return _gen_cli().render()
    if kind == "schema" and arg:
        return _schema(arg)
    if kind == "layers":
        return _layers()
    if kind == "settings":
        return _settings()
    if kind == "importers":
        return _importers()
    raise ValueError(f"unknown generated part: {match.group(0)}")


def on_config(config, **kwargs):
    # the worktree's abeq, whatever is installed
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return config


def on_page_markdown(markdown, page, config, files, **kwargs):
    return MARKER.sub(_fill, markdown)
