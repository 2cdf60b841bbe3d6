"""litellm, imported once, lazily (it takes seconds), offline and quiet, with abeq's providers registered."""

from __future__ import annotations

import gc
import importlib.util
import logging
import os
import threading
from pathlib import Path

_litellm = None
_lock = threading.Lock()


def offline_env() -> None:
    """litellm reaches for the network at import unless told not to."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


def litellm():
    """Import litellm once, offline, quiet, with abeq's providers registered."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _lock:
        if _litellm is None:
            offline_env()
            import litellm as ll

            ll.suppress_debug_info = True
            ll.telemetry = False
            if not os.environ.get("LITELLM_LOG"):
                # litellm warns each time a new event loop (a new run in the same process) takes
                # over its logging worker; harmless, and noise in a CLI or the desk's log.
                logging.getLogger("LiteLLM").setLevel(logging.ERROR)
            from .registry import register_all

            register_all(ll)
            _litellm = ll
            settle_heap()
    return _litellm


def settle_heap() -> None:
    """Move what is alive now (the modules just imported and their objects, kept for the process's
    life) out of the garbage collector's way: a full collection then walks only what came after.
    litellm brings ~350,000 tracked objects; the desk's Streamlit collects fully after every script
    and fragment run (`runner.postScriptGC`), ~0.23 s each with them and ~0 s frozen, several times a
    second while a run's progress redraws (bench/bench_desk_gc.py). Collected first, so no garbage of
    the moment is frozen with them."""
    gc.collect()
    gc.freeze()


def imported():
    """litellm when a call has already imported it, else None (never imports it)."""
    return _litellm


def litellm_file(*parts: str) -> Path | None:
    """A path inside the installed litellm package, found without importing it (seconds); None
    when litellm is not installed."""
    found = importlib.util.find_spec("litellm")  # locates the package without running it
    return Path(found.origin).parent.joinpath(*parts) if found and found.origin else None
