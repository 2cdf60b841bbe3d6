"""The review desk's importable logic: what the Streamlit pages call, testable without a browser.

Each page has a view-model, `<page>_vm` (run, transfer_set, review, documents, compare): functions
that take the store, ids and choices and return what to show, imported without Streamlit and
tested as plain Python. What draws is apart: `<page>_panels` (and `review_view`, `compare_page`)
lay out what a view-model computed; the page files in desk_pages/ only put the parts in order, and
app.py (the script `abeq app` serves) routes them.

`session` holds the current review and candidate, `links` keeps review, run and case in the URL,
`worker` runs engine jobs in background threads, `queries` reads a run's progress from sqlite,
`editor` maps transfer sets to the table editor and `case_view` shows one case whole, `cases`
orders, filters and searches a run's cases (the review queue), `metric` is a figure as a page
shows it, `render` builds escaped HTML, `access` and `identity` decide who may use the desk and
who acts on it (the launch token; the person signed in).
"""
