"""The desk's page files, run by Streamlit through abeq/desk/app.py's `st.Page` list (not imported).

Not named `pages/`: beside the main script that name turns on Streamlit's legacy folder discovery,
which takes over deep links on a fresh server.
"""
