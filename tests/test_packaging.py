"""A non-editable install still finds its prompts and the bundled example."""

import os
import subprocess
import sys

import pytest
from conftest import ROOT


@pytest.mark.slow
def test_prompts_and_examples_ship_in_the_wheel(tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    code = (
        "import abeq.prompts as p, abeq, pathlib; from abeq.prompts import load_prompt;"
        "assert 'site' in abeq.__file__, abeq.__file__;"
        "names=['runner-skill','runner-instruction-file','equivalence-judge','runner-tools','runner-command'];"
        "print([load_prompt(n).ref for n in names]);"
        "ex=pathlib.Path(abeq.__file__).parent/'examples'/'release-notes'/'SKILL.md'; assert ex.is_file();"
        # the desk's favicon is served from the package: no page fetches one from another host
        "assert (pathlib.Path(abeq.__file__).parent/'desk'/'favicon.png').is_file()"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=str(tmp_path),
        env={**env, "PYTHONPATH": str(target)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "equivalence-judge@2#" in out.stdout and "runner-command@1#" in out.stdout
