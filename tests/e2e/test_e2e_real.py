"""Real material in a real Chromium: a CLAUDE.md that imports AGENTS.md, read on Documents; an
imported set whose cases name no sections, with the reason and the mapping table on Transfer set."""

from __future__ import annotations

from pathlib import Path

from abeq import sets
from abeq.desk import session
from abeq.results.store.store import Store

from .helpers import ARTIFACTS, desk, nav, screenshot, settle

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"  # tests/fixtures
REAL = FIXTURES / "real"
EVALS = FIXTURES / "skill-creator" / "release-notes" / "evals" / "evals.json"


def test_imports_and_section_mapping_in_the_browser(page, tmp_path):
    db = tmp_path / "desk.db"
    with desk(db) as url:
        page.goto(url)
        page.get_by_role("heading", name="Documents", exact=True).wait_for(timeout=30_000)
        store = Store(str(db))
        imported, _ = sets.import_set("skill-creator", EVALS, default_type="happy")
        session.set_transfer_set(store, store.inputs.review("example"), imported)

        nav(page, "Transfer set")
        page.get_by_text("coverage is 0% because no case names a section").wait_for()
        page.get_by_text("Map cases to sections").first.wait_for()
        page.get_by_role("button", name="Save the mapping").wait_for()
        screenshot(page, ARTIFACTS / "transfer-set-mapping.png")

        nav(page, "Documents")
        page.get_by_text("Load another original").click()  # the example's original is loaded already
        page.get_by_text("Path", exact=True).first.click()
        settle(page)  # the radio reruns the page: type once the path field it draws is the last one
        # the textbox, not its help button (labelled "Help for Path on this machine")
        field = page.get_by_role("textbox", name="Path on this machine", exact=True).first
        field.fill(str(REAL / "instructions" / "DiversioTeam__claude-plugins" / "CLAUDE.md"))
        field.press("Enter")
        settle(page)
        page.get_by_role("button", name="Load path").first.click()
        page.get_by_text("Read CLAUDE.md with its imports: AGENTS.md").wait_for(timeout=30_000)
        screenshot(page, ARTIFACTS / "documents-imports.png")
    doc = Store(str(db)).inputs.document(Store(str(db)).inputs.review("example")["original_hash"])
    assert doc["name"] == "CLAUDE.md" and "How Claude Code Should Behave Here" in doc["content"]


def test_a_promptfoo_config_uploaded_with_its_tests_file_in_the_browser(page, tmp_path):
    """Upload a real promptfoo config together with the tests.csv it names, give the untyped cases a
    type, import: the table holds its cases."""
    db = tmp_path / "desk.db"
    cfg = REAL / "promptfoo" / "simple-csv"
    with desk(db) as url:
        page.goto(url)
        page.get_by_role("heading", name="Documents", exact=True).wait_for(timeout=30_000)
        nav(page, "Transfer set")
        page.get_by_text("Import / export a file").click()
        page.locator("input[type=file]").first.set_input_files(
            [str(cfg / "promptfooconfig.yaml"), str(cfg / "tests.csv")]
        )
        page.get_by_role("combobox", name="File to import").wait_for()  # two files: which one is the set
        settle(page)
        page.get_by_role("combobox", name="Type for cases without one").click()
        page.get_by_role("option", name="composition").click()
        settle(page)  # the choice reruns the page; Import then reads it
        page.get_by_role("button", name="Import (replaces the table)").click()
        page.get_by_text("Imported 4 cases from promptfooconfig.yaml (read as promptfoo)").wait_for(
            timeout=30_000
        )
        screenshot(page, ARTIFACTS / "transfer-set-promptfoo-upload.png")
    store = Store(str(db))
    ts = store.inputs.transfer_set(store.inputs.review("example")["transfer_set_hash"])
    assert len(ts.cases) == 4 and {c.type for c in ts.cases} == {"composition"}
    assert all(c.input for c in ts.cases) and not ts.user_confirmed
