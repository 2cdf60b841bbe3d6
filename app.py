"""The review desk from a clone: `streamlit run app.py` (or `python app.py`, which is `abeq app`).

The desk ships inside the package (abeq/desk/: its router, its pages in desk_pages/ and its Streamlit
settings in .streamlit/), so an installed wheel serves it with `abeq app` from any folder. This file
serves that same desk under `streamlit run`, with the same locks: a server bound beyond loopback, or
answering to any Host name, is refused, and the first session prints a link with this launch's token
in the terminal (a browser without it sees nothing). .streamlit/config.toml beside this file is a link
to the packaged one, so the settings are the same too.
"""

import sys


def _under_streamlit() -> bool:
    try:
        from streamlit import runtime
    except ImportError:
        return False
    return runtime.exists()


if _under_streamlit():
    from abeq.cli.app import serve_under_streamlit

    serve_under_streamlit()
elif __name__ == "__main__":
    from abeq.cli import main

    sys.exit(main(["app", *sys.argv[1:]]))
