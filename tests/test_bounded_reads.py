"""Every file abeq reads is read within bounds, by reading (issue 33, item 4): /dev/zero as a
document or set, a schema alias bomb in an is-json check, a FIFO or a swapped link in a workspace
folder, a 4 GB sparse file an agent leaves in its workspace copy."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import pytest
from conftest import EXAMPLE, ROOT

from abeq.errors import InputError
from abeq.sets.workspace import read_folder

# a child with 1 GB of address space: reading /dev/zero or a sparse file whole ends in MemoryError
BOUNDED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
sys.path.insert(0, {root!r})
"""


def bounded_child(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    script = BOUNDED.format(root=str(ROOT)) + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


def cli_child(*argv: str) -> subprocess.CompletedProcess:
    return bounded_child(f"from abeq.cli import main\nsys.exit(main({list(argv)!r}))")


@pytest.mark.parametrize("which", ["original", "transfer-set"])
def test_dev_zero_as_a_document_or_set_ends_in_a_message(tmp_path, which):
    files = {"original": str(EXAMPLE / "SKILL.md"), "transfer-set": str(EXAMPLE / "transfer-set.json")}
    files[which] = "/dev/zero"
    done = cli_child("check-set", "--original", files["original"], "--transfer-set", files["transfer-set"])
    assert done.returncode == 2, done.stderr[-1500:]
    assert "/dev/zero" in done.stderr and "over the limit" in done.stderr and "Traceback" not in done.stderr


def schema_bomb(levels: int) -> str:
    """A JSON Schema in YAML whose every level names the one below twice: 2**levels nodes expanded."""
    lines = ["l0: &l0 {type: string}"]
    lines += [f"l{i}: &l{i} {{anyOf: [*l{i - 1}, *l{i - 1}]}}" for i in range(1, levels + 1)]
    return "\n".join(lines) + f"\ntype: object\nproperties: {{x: *l{levels}}}\n"


def test_a_schema_alias_bomb_in_an_is_json_check_is_refused_at_once():
    bomb = schema_bomb(24)
    assert len(bomb) < 2_000  # a 2 KB set that took minutes (doubling per level) to lint
    done = bounded_child(
        f"""
        from abeq.execution.checks.code_checks import value_problem
        print(value_problem("is-json", {bomb!r}))
        """,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr[-1500:]
    assert "expands to more than" in done.stdout


def test_a_schema_bomb_given_as_an_object_is_refused_too():
    done = bounded_child(
        """
        from abeq.execution.checks.code_checks import value_problem

        node = {"type": "string"}
        for _ in range(40):  # shared, as YAML aliases in a promptfoo config make it
            node = {"anyOf": [node, node]}
        print(value_problem("is-json", {"type": "object", "properties": {"x": node}}))
        print(repr(value_problem("is-json", {"type": "object", "required": ["ok"]})))
        """,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr[-1500:]
    assert "expands to more than" in done.stdout and "''" in done.stdout


def test_a_fifo_in_a_workspace_folder_is_refused_without_waiting(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("fine")
    os.mkfifo(ws / "pipe")
    got: list = []

    def load():
        try:
            read_folder(ws, "c1", "set.json")
        except InputError as e:
            got.append(e.message)

    t = threading.Thread(target=load, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive() and got and "pipe is not a regular file" in got[0]


def test_a_workspace_file_is_bounded_by_reading_not_by_stat(tmp_path, monkeypatch):
    from abeq.sets import workspace

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.txt").write_text("x" * 2_000)
    monkeypatch.setattr(workspace, "MAX_FILE_BYTES", 1_000)
    with pytest.raises(InputError, match="big.txt is over 1,000 bytes"):
        read_folder(ws, "c1", "set.json")


# The swap happens at the k-th filesystem call the walk makes, for every k: whatever it checked
# before, a folder that becomes a link to an outside one is never read through.
SWAP_DURING_WALK = """
import os, shutil, sys
from pathlib import Path
from abeq.errors import InputError
from abeq.sets.workspace import read_folder

base = Path({base!r})
state = {{"k": -1, "n": 0, "busy": False}}

def swap_at_kth_call(event, args):
    if state["busy"] or state["k"] < 0 or not event.startswith(("os.", "open")):
        return
    state["n"] += 1
    if state["n"] == state["k"]:
        state["busy"] = True
        shutil.rmtree(base / "ws" / "sub")
        os.symlink(base / "outside", base / "ws" / "sub")
        state["busy"] = False

sys.addaudithook(swap_at_kth_call)
leaked, loads = [], 0
for k in range(1, 200):
    shutil.rmtree(base, ignore_errors=True)
    (base / "ws" / "sub").mkdir(parents=True)
    (base / "ws" / "sub" / "a.txt").write_text("inside")
    (base / "ws" / "b.txt").write_text("inside")
    (base / "outside").mkdir()
    (base / "outside" / "a.txt").write_text("OUTSIDE-SECRET")
    state.update(k=k, n=0)
    loads += 1
    try:
        files = read_folder(base / "ws", "c1", "set.json")
        if any("OUTSIDE-SECRET" in v for v in files.values()):
            leaked.append(k)
    except InputError:
        pass
    state["k"] = -1
    if state["n"] < k:  # the walk made fewer calls than k: every point was tried
        break
print("loads", loads, "leaked", leaked)
"""


def test_a_folder_swapped_for_a_link_during_the_walk_is_never_followed(tmp_path):
    done = bounded_child(SWAP_DURING_WALK.format(base=str(tmp_path / "race")))
    assert done.returncode == 0, done.stderr[-1500:]
    loads, leaked = done.stdout.split("leaked")
    assert int(loads.split()[1]) > 3 and leaked.strip() == "[]"


def test_a_4_gb_sparse_file_left_in_the_workspace_is_not_read_whole():
    done = bounded_child(
        """
        import os
        from abeq.documents import Document
        from abeq.execution.runners.workspace import RunWorkspace
        from abeq.schemas import Case

        case = Case(id="c1", type="happy", input="go", files={"a.txt": "one"})
        with RunWorkspace(case, Document("AGENTS.md", "Be brief."), "AGENTS.md") as ws:
            with open(ws.dir / "huge.bin", "wb") as f:
                f.truncate(4 << 30)
            os.mkfifo(ws.dir / "pipe")
            (ws.dir / "a.txt").write_text("two")
            changes = {c.path: c for c in ws.changes()}
        print(sorted(changes), changes["huge.bin"].note)
        """,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-1500:]
    assert "['a.txt', 'huge.bin']" in done.stdout and "4,294,967,296 bytes" in done.stdout
