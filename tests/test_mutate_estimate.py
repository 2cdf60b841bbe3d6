"""The mutation test's estimate (issue 47, item 6): "expected" is an expectation over the chance each
case kills, not the most a test could cost, and `abeq mutate` prints no stray warning. The figures on
real public skills are bench/bench_mutate_estimate.py's (too many calls for a test)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from conftest import EXAMPLE, ROOT

from abeq.mutation.estimate import start_chances


def test_a_case_starts_unless_an_earlier_one_killed():
    started, judged = start_chances([0.5, 0.5, 0.1], width=1)
    assert started == [1.0, 0.5, 0.25]  # one at a time: each waits for the kills before it
    assert judged == started  # nothing runs beside it
    started, judged = start_chances([0.5, 0.5, 0.1], width=8)
    assert started == [1.0, 1.0, 1.0]  # all at once
    assert judged[2] == 0.75 * 0.75 < judged[0] == 0.75 * 0.95  # a kill beside it stops it half the time


def test_mutate_expects_what_it_uses_and_prints_no_stray_warning(tmp_path):
    """`abeq mutate` of the bundled example at concurrency 8 (a kill stops the cases in flight):
    the tokens it expects before it starts are within 25% of those it used. Before, "expected" at
    concurrency 8 was every case of every mutant (+63%), and each call cancelled in flight printed
    "coroutine … was never awaited"."""
    from abeq import sets
    from abeq.documents import load_document

    cases = tmp_path / "cases.json"
    ts = sets.confirm(sets.load(EXAMPLE / "transfer-set.json"), load_document(EXAMPLE / "SKILL.md").hash)
    cases.write_text(ts.model_dump_json())
    out = tmp_path / "m.json"
    argv = [sys.executable, "-m", "abeq", "mutate", "--original", str(EXAMPLE / "SKILL.md"),
            "--transfer-set", str(cases), "--runner-model", "scripted/rules", "--db", str(tmp_path / "m.db"),
            "--concurrency", "8", "--out", str(out)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "default"}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    assert "never awaited" not in done.stderr and "RuntimeWarning" not in done.stderr
    said = re.search(r"expected as each mutant stops at its first kill \(~([\d,]+) tokens\)", done.stderr)
    assert said, done.stderr
    expected = int(said.group(1).replace(",", ""))
    used = json.loads(out.read_text())["calls"]["tokens"]
    assert abs(expected / used - 1) <= 0.25, (expected, used)
