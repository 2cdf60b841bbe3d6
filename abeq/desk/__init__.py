"""The review desk's importable logic: what the Streamlit pages call, testable without a browser.

`session` holds the current review and candidate, `worker` runs engine jobs in background
threads, `queries` reads a run's progress from sqlite, `editor` maps transfer sets to the
table editor, `cases` filters and pairs a run's cases, `render` builds escaped HTML.
"""
