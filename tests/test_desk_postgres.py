"""The desk on a team's PostgreSQL store (ABEQ_DB=postgresql://…): the representative desk tests of
test_app, test_desk_queue, test_desk_team and test_desk_runs, collected here again with the desk's
database on the session's server instead of a sqlite file (their own modules run them on sqlite)."""

from __future__ import annotations

import pytest
from test_app import (  # noqa: F401  (collected here: same tests, this module's `db`)
    test_a_run_survives_a_new_session_and_can_be_cancelled_from_it,
    test_an_override_needs_a_reason_changes_the_summary_and_is_stored,
    test_confirming_then_running_the_scripted_model_judges_every_case,
    test_every_page_renders,
)
from test_desk_queue import (  # noqa: F401
    runs,
    test_agree_records_the_reviewer_moves_on_and_updates_kappa,
    test_search_finds_ids_inputs_and_transcript_text,
    test_two_reviewers_on_one_case_get_asked_before_replacing,
)
from test_desk_runs import (  # noqa: F401
    test_a_run_whose_process_died_is_listed_as_interrupted_and_resumes_with_its_settings,
    test_review_says_running_not_fail_while_a_run_runs,
)
from test_desk_team import (  # noqa: F401
    run,
    test_the_run_is_dealt_out_from_the_page_and_each_reviewer_has_a_row,
)


@pytest.fixture
def db(pg_db, monkeypatch):
    """The desk's database: a PostgreSQL database of this test's own, given to the app as ABEQ_DB."""
    monkeypatch.setenv("ABEQ_DB", pg_db)
    return pg_db


KEY_PASSPHRASE = "client-key-passphrase-" + "q7" * 6


def test_the_desk_shows_the_store_without_its_password(pg_db, monkeypatch):
    """The sidebar's "Database:" caption, without the URL's password or its sslpassword= option's
    value (before, that was shown in clear)."""
    from urllib.parse import urlsplit

    from conftest import DESK_APP
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ABEQ_DB", f"{pg_db}?sslpassword={KEY_PASSPHRASE}")
    app = AppTest.from_file(str(DESK_APP), default_timeout=60)
    app.switch_page("desk_pages/5_history.py").run()
    assert not app.exception
    shown = " ".join(str(e.proto) for e in app.main) + " ".join(str(e.proto) for e in app.sidebar)
    assert "Database: postgresql" in shown and "sslpassword=" in shown
    for secret in (urlsplit(pg_db).password, KEY_PASSPHRASE):
        i = shown.find(secret)
        assert secret not in shown, shown[max(0, i - 300) : i + 100]
