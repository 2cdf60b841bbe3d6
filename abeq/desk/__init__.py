"""The review desk's importable logic: what the Streamlit pages call, testable without a browser.

`session` holds the current review and candidate, `links` keeps review, run and case in the URL,
`worker` runs engine jobs in background threads, `queries` reads a run's progress from sqlite,
`editor` maps transfer sets to the table editor and `case_view` shows one case whole, `cases`
orders, filters and searches a run's cases (the review queue), `review_view` draws the Review
page's parts, `render` builds escaped HTML.
"""
