"""The review desk with real material: an instruction file's @imports on Documents, and mapping an
imported set's cases to sections on Transfer set (Streamlit's AppTest)."""

from __future__ import annotations

from pathlib import Path

from abeq import sets
from abeq.desk import editor, session
from abeq.results.store.store import Store

REAL = Path(__file__).resolve().parent / "fixtures" / "real"
EVALS = (
    Path(__file__).resolve().parent / "fixtures" / "skill-creator" / "release-notes" / "evals" / "evals.json"
)


def test_documents_page_reads_a_claude_md_with_its_import_and_says_so(app):
    app.switch_page("desk_pages/1_documents.py").run()
    app.radio(key="original_mode").set_value("Path").run()
    app.text_input(key="original_path").input(
        str(REAL / "instructions" / "DiversioTeam__claude-plugins" / "CLAUDE.md")
    )
    app.button(key="original_load_path").click().run()
    assert not app.exception
    shown = [c.value.replace("\\", "") for c in app.caption]  # captions are Markdown-escaped
    assert any("Read CLAUDE.md with its imports: AGENTS.md (@AGENTS.md in CLAUDE.md)" in c for c in shown)


def test_documents_page_warns_that_pasted_imports_cannot_be_followed(app):
    app.switch_page("desk_pages/1_documents.py").run()
    app.radio(key="original_mode").set_value("Paste").run()
    app.text_input(key="original_name").input("CLAUDE.md")
    app.text_area(key="original_text").input("@AGENTS.md\n\n## Rules\n- be brief\n")
    app.button(key="original_load_text").click().run()
    assert any("load it by Path" in w.value.replace("\\", "") for w in app.warning)


def test_transfer_set_page_maps_imported_cases_to_sections(app, tmp_path):
    store = Store(str(tmp_path / "desk.db"))
    review = store.inputs.review("example")
    imported, _ = sets.import_set("skill-creator", EVALS, default_type="happy")
    session.set_transfer_set(store, review, imported)
    app.switch_page("desk_pages/2_transfer_set.py").run()
    assert any("coverage is 0% because no case names a section" in w.value for w in app.warning)
    assert any("How sections were found" in c.value for c in app.caption)
    review = store.inputs.review("example")
    original = store.inputs.document(review["original_hash"])["content"]
    frame = editor.mapping_frame(imported, original)
    assert frame.loc[0, "suggested"]  # a hint from shared words, not applied
    app.session_state[f"map_editor_{review['transfer_set_hash']}"] = {
        "edited_rows": {0: {"exercises_sections": ["Sorting changes by type", "Writing each entry"]}},
        "added_rows": [],
        "deleted_rows": [],
    }
    app.run()
    app.button(key="save_mapping").click().run()
    assert not app.exception
    saved = store.inputs.transfer_set(store.inputs.review("example")["transfer_set_hash"])
    assert saved.cases[0].exercises_sections == ["Sorting changes by type", "Writing each entry"]
    assert saved.cases[0].status == "user-modified" and saved.cases[1].exercises_sections == []
    cov = sets.coverage(original, saved)
    assert cov.sections_covered == ["Sorting changes by type", "Writing each entry"]
