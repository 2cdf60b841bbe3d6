"""Writing a transfer set out: JSON or YAML (everything), JSONL or CSV (the cases only)."""

from __future__ import annotations

import csv
import io
import json

from ..errors import InputError
from ..schemas import TransferSet
from ..untrusted import csv_cell
from .parse import dump
from .yaml12 import SourceFloat, SourceInt, reads_as_text


def export_text(ts: TransferSet, fmt: str) -> str:
    """The set as json or yaml (everything), or jsonl or csv (the cases only)."""
    if fmt == "json":
        return dump(ts) + "\n"
    if fmt == "yaml":
        import yaml

        return yaml.dump(
            ts.model_dump(exclude={"confirmed_by"} if ts.confirmed_by is None else None),
            Dumper=_block_dumper(),
            sort_keys=False,
            allow_unicode=True,
            width=100,
        )
    if fmt == "jsonl":
        return "".join(c.model_dump_json() + "\n" for c in ts.cases)
    if fmt == "csv":
        cols = [
            "id",
            "type",
            "input",
            "exercises_sections",
            "status",
            "gate_responses",
            "expectations",
            "rationale",
        ]
        # the structured fields get a column (JSON in the cell) only when a case has them
        cols += [f for f in _OPTIONAL if any(getattr(c, f) for c in ts.cases)]
        lines = [_csv_line(cols)]
        for c in ts.cases:
            secs = c.exercises_sections
            plain = not any(ch in s for s in secs for ch in ";|") and not any(s.startswith("[") for s in secs)
            exp = c.expectations
            row = {
                "id": c.id,
                "type": c.type,
                "input": c.input,
                "status": c.status,
                "rationale": c.rationale,
                "exercises_sections": "; ".join(secs) if plain else json.dumps(secs, ensure_ascii=False),
                "gate_responses": json.dumps([g.model_dump() for g in c.gate_responses], ensure_ascii=False)
                if c.gate_responses
                else "",
                "expectations": "\n".join(exp)
                if not any("\n" in e or e.startswith("[") for e in exp)
                else json.dumps(exp, ensure_ascii=False),
                **{f: _cell(c, f) for f in _OPTIONAL if f in cols},
            }
            # a spreadsheet must not run a cell as a formula; the importer takes the ' off again
            lines.append(_csv_line([csv_cell(row[k]) for k in cols]))
        return "".join(lines)
    raise InputError(f"cannot write a transfer set as '{fmt}'", hint="Use .json, .yaml, .jsonl or .csv.")


def _csv_line(cells: list) -> str:
    r"""One record, ending in "\n". Written with the csv module's own "\r\n" and then given "\n": with
    lineterminator="\n" it would leave a cell holding a lone "\r" unquoted, and a reader ends the
    record there."""
    buf = io.StringIO()
    csv.writer(buf).writerow(cells)
    return buf.getvalue()[:-2] + "\n"


_OPTIONAL = ("assertions", "metadata", "workspace", "files", "command_outputs")


def _cell(case, name: str) -> str:
    value = case.model_dump(mode="json", include={name})[name]
    if not value:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _block_dumper():
    import yaml

    class BlockDumper(yaml.SafeDumper):
        pass

    def text(dumper, value):  # multi-line inputs read as written, not as one escaped line
        # ...unless the text holds a character YAML reads as a line break (U+0085, U+2028, U+2029)
        # or a control character: PyYAML writes U+0085 raw (allow_unicode) and reads it back as a
        # break, so only the double-quoted style, which escapes them, gives back the same text.
        if any(
            ch in "\x85\u2028\u2029\ufeff" or (ch < " " and ch not in "\n\t") or "\x7f" <= ch < "\xa0"
            for ch in value
        ):
            style: str | None = '"'
        else:
            style = "|" if "\n" in value else None
        if style is None and not reads_as_text(value):
            style = "'"  # e.g. "1e5" or "0o17": plain, YAML 1.2 would read them back as numbers
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    BlockDumper.add_representer(str, text)
    # numbers read from YAML remember their spelling (yaml12); they are written as plain numbers
    BlockDumper.add_representer(SourceInt, yaml.SafeDumper.represent_int)
    BlockDumper.add_representer(SourceFloat, yaml.SafeDumper.represent_float)
    return BlockDumper
