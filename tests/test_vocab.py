"""The verdict names are spelled once, in abeq/vocab.py: every other module (SQL included, which
takes them as parameters) uses its constants. The prompts keep their own words."""

import ast
import io
import re
import tokenize

from conftest import ROOT

from abeq.vocab import CASE_RUN_STATUSES, DIVERGED, EQUIVALENT, REGRESSED, RUN_STATUSES, VERDICTS, StopReason

# a verdict spelled in a string: a hyphenated name anywhere (docstrings too), "equivalent" only as a
# quoted value (a Python literal, or '…' in SQL); prose may still say a run is equivalent
SPELLED = re.compile(
    rf"(?<![\w-])({re.escape(REGRESSED)}|{re.escape(DIVERGED)})(?![\w-])|[\"']{re.escape(EQUIVALENT)}[\"']"
)


def spelled_verdicts(root) -> list[str]:
    hits = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "vocab.py" and path.parent == root:
            continue
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
        for tok in tokens:
            found = SPELLED.search(tok.string) if tok.type == tokenize.STRING else None
            if found:
                hits.append(f"{path.relative_to(root.parent)}:{tok.start[0]}: {found[0]}")
    return hits


def test_the_pattern_finds_each_verdict_spelled_out():
    assert len(VERDICTS) == 3
    for v in VERDICTS:
        assert SPELLED.search(repr(v)) and SPELLED.search(f"where verdict = '{v}'")
    assert not SPELLED.search("the runs are equivalent")


def test_the_verdict_constants_are_the_verdict_type_s_names():
    assert set(VERDICTS) == {EQUIVALENT, REGRESSED, DIVERGED}


def test_no_module_outside_vocab_spells_a_verdict():
    assert spelled_verdicts(ROOT / "abeq") == []


# ------------------------------------------------------------------ run and case statuses
# a status word is unambiguous in a string of its own; "error" and "failed" are other things too
# (a message box's kind, a count of failed calls), so they count only where a status is meant
STATUS_WORDS = set(RUN_STATUSES) | set(CASE_RUN_STATUSES) | set(StopReason.__args__)
AMBIGUOUS = {"error", "failed"}


def _status_context(parent: ast.AST, node: ast.AST) -> bool:
    """`status="failed"`, `{"status": "error"}`, `row["status"] != "error"`, `x.status in (…)`."""
    if isinstance(parent, ast.keyword):
        return parent.arg == "status"
    if isinstance(parent, ast.Dict):
        return any(
            v is node and isinstance(k, ast.Constant) and k.value == "status"
            for k, v in zip(parent.keys, parent.values)
        )
    if isinstance(parent, ast.Compare):
        return "status" in ast.unparse(parent)
    return False


def spelled_statuses(files, root) -> list[str]:
    """Where a module spells a run's or a case's status instead of naming vocab's constant: a string
    that is a status, or holds one quoted as SQL does; not a docstring, a dict key, a subscript
    (`counts["judged"]` is a count's name) or an attribute name."""
    hits = []
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            parent = parents.get(node)
            while isinstance(parent, (ast.Tuple, ast.List, ast.Set)):  # `in ("running", …)`
                node, parent = parent, parents.get(parent)
            if isinstance(parent, ast.Expr):  # a docstring
                continue
            if isinstance(parent, ast.Dict) and any(k is node for k in parent.keys):
                continue
            if isinstance(parent, ast.Subscript) and parent.slice is node:
                continue
            if isinstance(parent, ast.Call) and getattr(parent.func, "id", "") in ("getattr", "hasattr"):
                continue
            words = {
                n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            }
            found = {
                w
                for w in words
                if w in STATUS_WORDS and (w not in AMBIGUOUS or _status_context(parent, node))
            }
            found |= {s for s in STATUS_WORDS for w in words if f"'{s}'" in w}  # SQL's quoted value
            if found:
                hits.append(f"{path.relative_to(root).as_posix()}:{node.lineno}: {sorted(found)}")
    return sorted(set(hits))  # the words of one tuple are one hit


def _library(root):
    skip = {root / "abeq" / "vocab.py"}
    files = [*(root / "abeq").rglob("*.py"), *(root / "desk_pages").glob("*.py"), root / "app.py"]
    return sorted(f for f in files if f not in skip and f.is_file())


def test_the_status_check_finds_each_way_of_spelling_a_status(tmp_path):
    (tmp_path / "a.py").write_text(
        "def f(row, store, run_id):\n"
        '    if row["status"] == "judged":\n'  # a case's status
        '        store.log.update_run(run_id, status="failed")\n'  # a run's
        '    live = row["status"] in ("running", "cancelling")\n'
        "    return \"select * from runs where status != 'finished'\", live\n"
    )
    (tmp_path / "ok.py").write_text(
        '"""A run that is running, then finished."""\n'
        "def f(counts, limiter):\n"
        '    box = ("error", "no verdict")  # a message box\'s kind\n'
        '    return {"judged": counts["judged"], "failed": 0}, hasattr(limiter, "failed"), box\n'
    )
    found = spelled_statuses(sorted(tmp_path.glob("*.py")), tmp_path)
    assert sorted(f.split(":")[:2] for f in found) == [
        ["a.py", "2"],
        ["a.py", "3"],
        ["a.py", "4"],
        ["a.py", "5"],
    ]


def test_no_module_outside_vocab_spells_a_run_or_case_status():
    assert spelled_statuses(_library(ROOT), ROOT) == []


def test_no_module_outside_vocab_spells_a_gate_profile():
    """A gate profile is a word of vocab (COMPRESS, DIRECTIVE_CLARITY): the options table's default
    and each comparison use it, so no module keeps a default or a test of its own spelling."""
    from abeq.vocab import GATES

    root = ROOT / "abeq"
    hits = []
    for path in sorted(root.rglob("*.py")):
        if path == root / "vocab.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in GATES:
                hits.append(f"{path.relative_to(root.parent)}:{node.lineno}: {node.value}")
    assert hits == []
