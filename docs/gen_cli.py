"""The CLI reference, generated from each command's own `--help` (run by docs/hooks.py at build
time, and by tests/test_docs.py), so the page cannot drift from the parser."""

from __future__ import annotations

import argparse
import contextlib
import io
import os


def commands() -> dict[str, argparse.ArgumentParser]:
    """Every `abeq` command, in the order `abeq --help` lists them."""
    from abeq.cli import build_parser

    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help(parser: argparse.ArgumentParser) -> str:
    # argparse wraps to the terminal's width: fix it, so the page is the same on every machine
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            parser.print_help()
        return out.getvalue().rstrip()
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def render() -> str:
    """Markdown: `abeq --help`, then one section per command with its `--help`."""
    from abeq.cli import build_parser

    parts = ["## abeq\n", "```text", _help(build_parser()), "```\n"]
    for name, parser in commands().items():
        parts += [f"## abeq {name}\n", "```text", _help(parser), "```\n"]
        for action in parser._actions:  # a command with actions of its own (`abeq skill install`)
            if isinstance(action, argparse._SubParsersAction):
                for sub, p in action.choices.items():
                    parts += [f"## abeq {name} {sub}\n", "```text", _help(p), "```\n"]
    return "\n".join(parts)
