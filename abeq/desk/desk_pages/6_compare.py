"""Compare: the blind comparator on two pasted outputs or on a stored case's teacher and candidate."""

from abeq.desk.compare_page import render_compare_page

render_compare_page()
