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


# ------------------------------------------------------------------ citations of the project's reference
# A comment or docstring that cites a behaviour names a page of docs/ and one of its headings; a
# document outside the repository (once "SPEC §N") is never cited.
CITATION = re.compile(r'docs/([\w/.-]+\.md),\s+"([^"]+)"')
OUTSIDE = re.compile(r"\bSPEC\b")


def _prose(path: Path) -> list[tuple[int, str]]:
    """The comments and strings of a Python file (not its names: `SPEC = ModelSpec(...)` is a
    variable), or every line of any other text file, with their line numbers."""
    import io
    import tokenize

    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return list(enumerate(text.splitlines(), 1))
    kinds = (tokenize.COMMENT, tokenize.STRING)
    return [
        (t.start[0], t.string)
        for t in tokenize.generate_tokens(io.StringIO(text).readline)
        if t.type in kinds
    ]


def _cited_files() -> list[Path]:
    kinds = ("*.py", "*.md", "*.json", "*.toml", "*.yml")
    roots = [ROOT / d for d in ("abeq", "docs", "prompts", "tests", "bench", "desk_pages")]
    found = [p for r in roots for k in kinds for p in r.rglob(k) if ".venv" not in p.parts]
    top = (ROOT / n for n in ("README.md", "app.py", "pyproject.toml", "mkdocs.yml"))
    return sorted({*found, *(p for p in top if p.is_file())})


def _headings(page: Path) -> set[str]:
    return {m[1].strip() for m in re.finditer(r"^#{1,4}\s+(.+)$", page.read_text(encoding="utf-8"), re.M)}


def outside_citations(files: list[Path]) -> list[str]:
    return [
        f"{p.relative_to(ROOT)}:{n}"
        for p in files
        if p != Path(__file__)
        for n, s in _prose(p)
        if OUTSIDE.search(s)
    ]


def broken_citations(files: list[Path]) -> list[str]:
    out = []
    for p in files:
        if p == Path(__file__):
            continue
        for n, s in _prose(p):
            for page, heading in CITATION.findall(" ".join(s.split())):
                target = DOCS / page
                if not target.is_file() or heading not in _headings(target):
                    out.append(f"{p.relative_to(ROOT)}:{n}: docs/{page}, {heading!r}")
    return out


def test_no_document_outside_the_repository_is_cited():
    assert outside_citations(_cited_files()) == []


def test_every_citation_names_a_page_and_heading_of_the_docs():
    files = _cited_files()
    assert broken_citations(files) == []
    cited = {c for p in files for _, s in _prose(p) for c in CITATION.findall(" ".join(s.split()))}
    assert {h for _, h in cited} >= {
        "The report",
        "When unsure, regressed",
        "Gate profiles",
        "comparison.json",
    }


def test_the_citation_checks_can_fail(tmp_path, monkeypatch):
    bad = ROOT / "tests" / "fixtures" / "_citation_probe.py"
    try:
        bad.write_text('# the report (SPEC §4)\nX = 1  # docs/reference/rules.md, "No such heading"\n')
        assert outside_citations([bad]) == ["tests/fixtures/_citation_probe.py:1"]
        assert broken_citations([bad]) == [
            "tests/fixtures/_citation_probe.py:2: docs/reference/rules.md, 'No such heading'"
        ]
    finally:
        bad.unlink()
