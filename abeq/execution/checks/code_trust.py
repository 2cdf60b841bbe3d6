"""Code a transfer set carries (promptfoo `python`/`javascript` asserts and transforms) runs on this
machine only when the person running abeq said so.

A set is data someone else may have written; its scripts are programs. So a run refuses, before any
model call, a set whose code is not trusted, naming every piece of it. Trust is given for exactly
this code: `--trust-code` on one command, or remembered by `abeq check-set --confirm --trust-code`
(and the desk's Confirm) in a file of the user's own (as `direnv allow` remembers a folder), keyed
by the hash of the code. Anything the set file or a database says about trust is not read: both can
be handed over by the stranger whose code it is. A changed script has another hash and needs trust
again.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from ...errors import InputError
from ...schemas import Case, TransferSet
from ...timestamps import now
from .checks import _SCRIPTS, _TRANSFORMS, _flatten, base_type, check_value

TRUST_FILE_ENV = "ABEQ_TRUST_FILE"
_MAX_TRUST_FILE = 4 * 1024 * 1024  # bytes read of the trust file at most


@dataclass(frozen=True)
class CodeItem:
    """One piece of code a set would run: which case and check, what kind, in which language, where."""

    case_id: str
    check: int  # the assertion's position in the case, from 1 (an assert-set's members counted)
    role: str  # "assert", "transform" or "test transform"
    language: str  # "python" or "javascript"
    code: str  # the inline body, or the file's source read in at import
    file: str  # the script file's name when the code came from one ("" for inline code)
    line: int | None = None  # the line of the set file where it stands, when it can be found

    def where(self, set_path: str | None = None) -> str:
        at = f"{set_path}:{self.line}" if set_path and self.line else (set_path or "the set")
        src = f" ({self.file}, read in at import)" if self.file else ""
        return f"{at}: case {self.case_id}, check {self.check}: {self.language} {self.role}{src}"

    def as_dict(self) -> dict:
        out = asdict(self)
        out.pop("code")
        out["sha256"] = hashlib.sha256(self.code.encode()).hexdigest()
        return out


def code_items(ts: TransferSet, set_path: str | None = None, *, text: str | None = None) -> list[CodeItem]:
    """Every script the set's checks would run, in case and check order; with the set file's path
    (or its `text`, read elsewhere: at a git revision), each names the line where it stands."""
    text = _set_text(set_path) if text is None else text
    out: list[CodeItem] = []
    for case in ts.cases:
        out += _case_items(case, text)
    return out


def _case_items(case: Case, text: str) -> list[CodeItem]:
    out: list[CodeItem] = []
    for n, a in enumerate(_flatten(case.assertions), start=1):
        for key in _TRANSFORMS:
            code = a.options.get(key)
            if isinstance(code, str) and code.strip():
                script = a.options.get(f"{key}_script")
                lang = "python" if _file(script).endswith(".py") else "javascript"
                role = "test transform" if key.startswith("test_") else "transform"
                out.append(_item(case, n, role, lang, code, script, text))
        t, _ = base_type(a.type)
        # the code as it runs: the case's vars pasted in (a changed var is changed code)
        value = check_value(a, case)[0]
        if t in _SCRIPTS and isinstance(value, str) and value.strip():
            script = a.options.get("script")
            name = _file(script)
            lang = ("python" if name.endswith(".py") else "javascript") if name else t
            out.append(_item(case, n, "assert", lang, value, script, text, written=str(a.value)))
    return out


def _file(script: object) -> str:
    return str(script.get("name") or "") if isinstance(script, dict) else ""


def _item(
    case: Case, n: int, role: str, lang: str, code: str, script: object, text: str, written: str = ""
) -> CodeItem:
    source = str(script.get("source", "")) if isinstance(script, dict) else ""
    # a file read in at import runs its source; the value (file://x.py:fn) only names it
    body = f"{code}\n{source}" if source else code
    return CodeItem(case.id, n, role, lang, body, _file(script), _line(text, case.id, written or code))


def _set_text(set_path: str | None) -> str:
    if not set_path:
        return ""
    try:
        with open(set_path, "rb") as f:
            return f.read(64 * 1024 * 1024).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _line(text: str, case_id: str, code: str) -> int | None:
    """The line of the set file where `code` stands, looked for after the case's id (as written, or
    as JSON writes it)."""
    if not text:
        return None
    first = next((ln.strip() for ln in code.splitlines() if ln.strip()), "")
    if not first:
        return None
    start = max(text.find(case_id), 0)
    for needle in (first, json.dumps(first, ensure_ascii=False)[1:-1]):
        at = text.find(needle, start)
        if at == -1:
            at = text.find(needle)
        if at != -1:
            return text.count("\n", 0, at) + 1
    return None


def code_hash(items: Iterable[CodeItem]) -> str:
    """The hash trust is given for: every script's case, check, role, language and text."""
    blob = json.dumps(
        [[i.case_id, i.check, i.role, i.language, i.file, i.code] for i in items],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode()).hexdigest()


# ------------------------------------------------------------------ the user's trust file
def trust_file() -> Path:
    """Where the hashes of code this user trusted are kept: $ABEQ_TRUST_FILE, else
    $XDG_DATA_HOME/abeq/trusted-code.json (~/.local/share when unset)."""
    if os.environ.get(TRUST_FILE_ENV):
        return Path(os.environ[TRUST_FILE_ENV])
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "abeq" / "trusted-code.json"


def _read_trusted() -> list[dict]:
    """The trust file's entries: none when it does not exist, or when someone else owns it or can
    write it (it could grant trust for them); one that is not a file, cannot be read or is not
    abeq's JSON is an InputError naming it (a run must not go on as if nothing were trusted)."""
    path = trust_file()
    hint = (
        f"Remove it, or point {TRUST_FILE_ENV} at a file of your own "
        "(abeq check-set --confirm --trust-code writes it)."
    )
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return []
    except OSError as e:
        raise InputError(f"the trust file cannot be read: {e.strerror}", path=str(path), hint=hint) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise InputError("the trust file is not a regular file", path=str(path), hint=hint)
    with os.fdopen(fd, "rb") as f:
        # a file someone else can write could grant trust for them: it is not read
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            return []
        raw = f.read(_MAX_TRUST_FILE + 1)
    if len(raw) > _MAX_TRUST_FILE:
        raise InputError(f"the trust file is over {_MAX_TRUST_FILE:,} bytes", path=str(path), hint=hint)
    try:
        data = json.loads(raw)
    except ValueError:
        raise InputError("the trust file is not JSON", path=str(path), hint=hint) from None
    entries = data.get("trusted") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise InputError('the trust file has no "trusted" list', path=str(path), hint=hint)
    return [e for e in entries if isinstance(e, dict)]


def is_trusted(digest: str) -> bool:
    """Whether this user trusted code with this hash (abeq check-set --confirm --trust-code)."""
    return any(e.get("hash") == digest for e in _read_trusted())


def remember_trust(items: list[CodeItem], set_path: str | None = None) -> str:
    """Record that this user trusts exactly this code; returns its hash. The file is the user's
    own (0600, written whole by a rename)."""
    digest = code_hash(items)
    if not items or is_trusted(digest):
        return digest
    entries = _read_trusted()
    entries.append(
        {
            "hash": digest,
            "set": os.path.abspath(set_path) if set_path else None,
            "scripts": len(items),
            "trusted_at": now(),
        }
    )
    path = trust_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".trusted-code.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"trusted": entries}, f, indent=1)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return digest


def trust_state(
    ts: TransferSet, trust_code: bool, set_path: str | None = None
) -> tuple[list[CodeItem], bool]:
    """The set's code and whether it may run: no code, `trust_code` given, or its hash trusted."""
    items = code_items(ts, set_path)
    return items, (not items or trust_code or is_trusted(code_hash(items)))


def trust_on_confirm(ts: TransferSet, set_path: str, trust_code: bool) -> str:
    """At a confirmation: remember the trust for the set's code when asked (what is said), or say
    that its code is still not trusted ("" for a set without code)."""
    items, trusted = trust_state(ts, False, set_path)
    if not items:
        return ""
    if trust_code:
        digest = remember_trust(items, set_path)
        return (
            f"trusted: the {len(items)} script(s) of this set (code {digest[:12]}) run in later runs "
            f"without --trust-code until one changes (kept in {trust_file()})"
        )
    if trusted:
        return ""
    return (
        f"note: the set's {len(items)} script(s) are not trusted: a run refuses it without --trust-code "
        "(or confirm again with --trust-code to remember the trust)"
    )
