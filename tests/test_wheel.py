"""The wheel is the product: built from a clean copy of the tree, installed in a fresh environment
and used from a folder outside the checkout, it is all of abeq (tests/installed.py builds it; the
desk from the wheel is tested in Chromium in tests/e2e/test_e2e_wheel.py)."""

import json
import subprocess

import pytest
from installed import ROOT, source_files

# one test process builds and installs the wheel for all of them and the desk-from-the-wheel browser test
pytestmark = pytest.mark.xdist_group("wheel")

# what the test run itself writes into a checkout, never part of abeq
SCRATCH = {"__pycache__"}


def test_every_file_of_the_package_is_in_the_wheel(installed_wheel):
    """Modules, prompts, examples, the calibration suite, the desk's pages, favicon and settings:
    whatever is under abeq/ in the tree is installed, so a file added later and not packaged fails."""
    tree = {p.relative_to("abeq").as_posix() for p in source_files() if p.parts[0] == "abeq"}
    got = {
        p.relative_to(installed_wheel.package).as_posix()
        for p in installed_wheel.package.rglob("*")
        if p.is_file() and not SCRATCH & set(p.parts)
    }
    assert tree - got == set(), "in the tree but not in the wheel"
    assert {"desk/app.py", "desk/desk_pages/4_review.py", "desk/.streamlit/config.toml"} <= got
    assert "prompts/equivalence-judge.md" in got and "mutation/run.py" in got


def test_every_module_imports_from_the_installed_package(installed_wheel):
    """Each module the tree has, imported by name in the fresh environment, from outside the
    checkout: it must import, and from the installed files."""
    names = sorted(
        ".".join(p.with_suffix("").parts[:-1] if p.name == "__init__.py" else p.with_suffix("").parts)
        for p in source_files()
        if p.parts[0] == "abeq" and p.suffix == ".py"
    )
    # Running these is their import: the CLI, and the desk's Streamlit scripts (the browser test
    # loads those through `abeq app`).
    scripts = {"abeq.__main__", "abeq.desk.app"}
    modules = [n for n in names if n not in scripts and all(part.isidentifier() for part in n.split("."))]
    assert "abeq.mutation.run" in modules and len(modules) > 150
    code = (
        "import importlib, json, sys\n"
        "bad = {}\n"
        "for name in json.loads(sys.argv[1]):\n"
        "    try:\n"
        "        f = importlib.import_module(name).__file__\n"
        "        if not f.startswith(sys.argv[2]): bad[name] = 'imported from ' + f\n"
        "    except Exception as e:\n"
        "        bad[name] = repr(e)\n"
        "print(json.dumps(bad))\n"
    )
    done = subprocess.run(
        [installed_wheel.python, "-c", code, json.dumps(modules), str(installed_wheel.package)],
        cwd=installed_wheel.home,
        env=installed_wheel.env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {}


def test_the_installed_cli_runs_the_bundled_example(installed_wheel):
    """`abeq run`, `abeq mutate` and `abeq calibrate` with the scripted model, from outside the
    checkout, on the example the wheel carries; `python -m abeq` is `abeq`."""
    w = installed_wheel
    ex = w.package / "examples" / "release-notes"
    assert ROOT not in ex.parents
    version = w.run("--version")
    assert version.returncode == 0 and version.stdout.startswith("abeq 0.")
    as_module = subprocess.run(
        [w.python, "-m", "abeq", "--version"], cwd=w.home, env=w.env(), capture_output=True, text=True
    )
    assert as_module.stdout == version.stdout
    models = ["--runner-model", "scripted/rules", "--judge-model", "scripted/rules"]
    files = ["--original", str(ex / "SKILL.md"), "--transfer-set", str(ex / "transfer-set.json")]

    run = w.run("run", *files, "--candidate", str(ex / "candidate-lossy.md"), "--confirm", *models,
                "--out", "report.json")  # fmt: skip
    assert run.returncode == 1, run.stderr  # the lossy candidate regressed: 1, told apart from a crash (4)
    report = json.loads((w.home / "report.json").read_text())
    assert len(report["cases"]) == 7 and report["summary"]["regressions"] > 0

    mutate = w.run("mutate", *files, "--confirm", *models, "--out", "mutation.json")
    assert mutate.returncode == 0, mutate.stderr
    assert json.loads((w.home / "mutation.json").read_text())["mutants"]

    cal = w.run("calibrate", "--judge-model", "scripted/rules", "--quiet")
    assert cal.returncode == 0, cal.stderr
    assert "on suite abeq-builtin" in cal.stdout and "stored as calibration 1" in cal.stdout
    assert (w.home / "abeq.db").is_file()  # the database is where the user is, not in the package
    assert not list(w.package.rglob("*.db"))
