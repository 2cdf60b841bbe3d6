"""What abeq writes and shows cannot be turned against its user (issue 27, items 7-10)."""

from __future__ import annotations

import json
import stat

import pytest
from conftest import EXAMPLE, ROOT
from streamlit.testing.v1 import AppTest

from abeq.cli import main
from abeq.desk import links
from abeq.results.store import Store
from abeq.testing.synthetic import synthetic_run
from abeq.untrusted import term_safe


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ------------------------------------------------------------------ 8: the database is private
def test_a_new_database_and_its_wal_and_shm_are_0600(tmp_path):
    store = Store(str(tmp_path / "abeq.db"))
    synthetic_run(store, 3, review="r")  # writes: the -wal and -shm files exist now
    files = [tmp_path / n for n in ("abeq.db", "abeq.db-wal", "abeq.db-shm")]
    assert all(f.exists() for f in files)
    assert {f.name: _mode(f) for f in files} == {f.name: 0o600 for f in files}
    store.close()


# ------------------------------------------------------------------ 10: odd run ids, terminal escapes
@pytest.mark.parametrize("text", ["²", "9" * 5000, "-1", "1e3", " 1", ""])
def test_a_run_id_from_a_url_is_ascii_digits_that_fit(text):
    assert links.run_id(text) is None


@pytest.mark.parametrize("page", ["desk_pages/4_review.py", "desk_pages/6_compare.py"])
@pytest.mark.parametrize("run", ["²", "9" * 5000])
def test_an_odd_run_id_in_the_url_shows_a_message_not_a_traceback(db, page, run):
    synthetic_run(Store(db), 3, review="r")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["run"] = run
    at.run()
    assert not at.exception
    at.switch_page(page).run()
    assert not at.exception, at.exception
    if page.endswith("review.py"):
        assert any("is not a run of this review" in w.value for w in at.warning)


def test_terminal_escapes_in_a_case_id_reach_the_cli_neutralised(tmp_path, capsys):
    ts = json.loads((EXAMPLE / "transfer-set.json").read_text())
    hostile = "\x1b]0;pwned\x07\x1b[2J\x9b31m\rPASS"
    for c in ts["cases"]:
        c["id"] = hostile + c["id"]
    (tmp_path / "ts.json").write_text(json.dumps(ts))
    code = main(
        [
            "run",
            "--original", str(EXAMPLE / "SKILL.md"),
            "--candidate", str(EXAMPLE / "candidate-lossy.md"),
            "--transfer-set", str(tmp_path / "ts.json"),
            "--runner-model", "scripted/rules",
            "--db", str(tmp_path / "abeq.db"),
            "--confirm",
        ]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and term_safe(hostile) in err  # the id is printed (checks lost), visibly escaped
    assert not any(ch in err for ch in "\x1b\x07\x9b") and "\rPASS" not in err
