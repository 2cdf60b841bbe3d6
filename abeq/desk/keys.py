"""The Review page's keyboard: Next, Previous, Agree and the override reason."""

from __future__ import annotations

# Keys: Streamlit's own button shortcuts for Next, Previous and Agree (they stay quiet while the
# reviewer types in a field); this script adds the one Streamlit has no binding for: focusing the
# override reason. It is fixed text (nothing from the database), installed once per page load.
KEYS = {"next": "N", "prev": "P", "agree": "A", "reason": "O"}
KEYS_HELP = (
    "Keys: **N** next case · **P** previous case · **A** agree with the judge · "
    "**O** write an override reason"
)
KEY_SCRIPT = """<script>
(() => {
  const doc = window.document;
  if (window.__abeqFocusKey) doc.removeEventListener("keydown", window.__abeqFocusKey, true);
  window.__abeqFocusKey = (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.composedPath ? e.composedPath()[0] : e.target;
    if (t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName))) return;
    // Shift+N / P / A: the help says N, P, A, and Streamlit binds only the unshifted keys
    const shifted = {N: ".st-key-next button", P: ".st-key-prev button", A: ".st-key-agree button"};
    if (e.shiftKey && shifted[e.key]) {
      const b = doc.querySelector(shifted[e.key]);
      if (b && !b.disabled) { e.preventDefault(); b.click(); }
      return;
    }
    if (e.key !== "o" && e.key !== "O") return;
    const box = doc.querySelector(".st-key-ov_reason textarea");
    if (!box) return;
    e.preventDefault();
    box.scrollIntoView({block: "center"});
    box.focus();
  };
  doc.addEventListener("keydown", window.__abeqFocusKey, true);
})();
</script>"""


def keyboard(st) -> None:
    st.html(KEY_SCRIPT, unsafe_allow_javascript=True)
