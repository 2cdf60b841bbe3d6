"""The Review page's keyboard: Next, Previous, Agree, the override reason and saving it."""

from __future__ import annotations

# Keys: Streamlit's own button shortcuts for Next and Previous (they stay quiet while the reviewer
# types in a field); this script adds focusing the override reason, and Agree, which it ignores for
# a moment after a new case is shown: a reviewer pressing A twice must not approve a case they
# have not read. It is fixed text (nothing from the database), installed once per page load.
KEYS = {"next": "N", "prev": "P", "agree": "A", "reason": "O"}
AGREE_PAUSE_MS = 1200
KEYS_HELP = (
    "Keys: **N** next case · **P** previous case · **A** agree with the judge (not in the first "
    f"{AGREE_PAUSE_MS / 1000:g} s a case is shown) · **O** write an override reason · **Ctrl+Enter** "
    "in it saves the override"
)
KEY_SCRIPT = """<script>
(() => {
  const doc = window.document;
  if (window.__abeqFocusKey) doc.removeEventListener("keydown", window.__abeqFocusKey, true);
  if (window.__abeqWatch) clearInterval(window.__abeqWatch);
  // when the case shown (the panel's data-abeq-case) last changed
  const shown = () => {
    const m = doc.querySelector("[data-abeq-case]");
    return m ? m.dataset.abeqCase : null;
  };
  window.__abeqCase = shown(); window.__abeqShownAt = Date.now();
  if (!doc.getElementById("abeq-key-style")) {
    const css = doc.createElement("style");
    css.id = "abeq-key-style";
    css.textContent = '[data-abeq-wait]::after {content: " · just shown: read it, then press A again";'
      + ' font-weight: 400; color: #9a6700}';
    doc.head.appendChild(css);
  }
  window.__abeqWatch = setInterval(() => {
    const c = shown();
    if (c !== window.__abeqCase) { window.__abeqCase = c; window.__abeqShownAt = Date.now(); }
  }, 100);
  window.__abeqFocusKey = (e) => {
    const t = e.composedPath ? e.composedPath()[0] : e.target;
    // Ctrl+Enter in the override's Reason saves the override, with the verdict chosen: the form
    // itself never submits on a key (its first button is Agree)
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && t && t.closest && t.closest(".st-key-ov_reason")) {
      e.preventDefault();
      const save = doc.querySelector(".st-key-ov_submit button");
      if (save && !save.disabled) save.click();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName))) return;
    if (e.key === "a" || e.key === "A") {
      e.preventDefault();
      const b = doc.querySelector(".st-key-agree button");
      const m = doc.querySelector("[data-abeq-case]");
      if (!b || b.disabled || !m || shown() !== window.__abeqCase) return;
      if (Date.now() - window.__abeqShownAt < PAUSE) {  // just shown: read it first
        m.dataset.abeqWait = "1";
        setTimeout(() => { delete m.dataset.abeqWait; }, PAUSE);
        return;
      }
      b.click();
      return;
    }
    // Shift+N / P: the help says N, P, and Streamlit binds only the unshifted keys
    const shifted = {N: ".st-key-next button", P: ".st-key-prev button"};
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
</script>""".replace("PAUSE", str(AGREE_PAUSE_MS))


def keyboard(st) -> None:
    st.html(KEY_SCRIPT, unsafe_allow_javascript=True)
