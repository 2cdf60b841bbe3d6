"""The documentation: a short README, a docs site that builds with no broken link, and a CLI
reference that lists every command (as sqlite-utils checks its own)."""

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README_LIMIT = 15_000  # bytes: what abeq is, the set-up, a tour and links; the rest is in docs/


def _gen_cli():
    spec = importlib.util.spec_from_file_location("abeq_docs_gen_cli", DOCS / "gen_cli.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_is_short():
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes; move detail into a docs/ page"


def test_readme_keeps_the_two_setup_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = text.split("## Set-up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^    (make \w+)$", setup, re.M) == ["make demo", "make test"]


def test_every_command_is_in_the_cli_reference():
    gen = _gen_cli()
    names = list(gen.commands())
    assert {"run", "resume", "check-set", "import-set", "app", "compare"} <= set(names)
    page = gen.render()
    for name, parser in gen.commands().items():
        assert f"## abeq {name}\n" in page, name
        assert parser.format_usage().split()[1] in page  # its own usage line, not a stub
    # the page fills itself from the generator at build time
    assert "<!-- generated: cli -->" in (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")


def test_every_command_is_explained_in_a_guide():
    guides = "\n".join(p.read_text(encoding="utf-8") for p in (DOCS / "guides").glob("*.md"))
    missing = [name for name in _gen_cli().commands() if f"abeq {name}" not in guides]
    assert not missing, f"commands no guide in docs/guides/ mentions: {missing}"


def test_every_public_name_is_in_the_api_reference():
    import abeq

    page = (DOCS / "reference" / "api.md").read_text(encoding="utf-8")
    for name in abeq.__all__:
        target = abeq._EXPORTS[name]
        module, attr = target if isinstance(target, tuple) else (target, name)
        assert f"::: {module}.{attr}\n" in page, (
            f"abeq.{name} ({module}.{attr}) is not in docs/reference/api.md"
        )


def test_every_docs_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = [p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")]
    assert pages and all(page in nav for page in pages), pages


@pytest.mark.skipif(
    shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None,
    reason="mkdocs is in the test extra",
)
def test_docs_site_builds_strict(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "abeq check-set" in cli and "generated:" not in cli


def test_mutation_guide_says_whether_abeq_mutate_exists():
    # the guide was written before `abeq mutate` landed: it must say "planned" exactly while the
    # command is missing, so it cannot promise a command that is not there, nor hide one that is
    page = (DOCS / "guides" / "mutation.md").read_text(encoding="utf-8")
    planned = "Planned, not in this version" in page
    assert planned == ("mutate" not in _gen_cli().commands())
