"""Loading a model's weights, converted once to a format llama.cpp computes fast.

The default model's package ships SmolLM2 as Q4_1, a format for which
llama.cpp's CPU backend has only its generic kernels on x86.  Converted to
Q8_0 (llama.cpp's own quantizer, about a second, once per machine) the same
model reads a prompt about twice as fast (on a busy 2-core machine the first
suggestion after a click comes about 40% sooner) and decodes a token about as
fast, and it suggests as well: Q8_0 holds every Q4_1 weight to within 1/254
of the largest one in its block of 32, a fraction of Q4_1's own step, and
the next-token distributions differ by 0.01-0.02 nats (daemon/evaluation/README.md,
*First suggestion after a click*).  Other formats are loaded as they are:
Qwen2.5-Coder's Q4_K_M file decoded no faster as Q8_0, and converting down
to Q4_0 costs suggestions.

:func:`load` loads a GGUF file.  A Q4_1 file is converted into the model
cache the first time (written under a temporary name and renamed, so a crash
or a second process never leaves half a file), and the converted file is
loaded from then on.  Anything that goes wrong on the way (a cache that
cannot be written, a full disk, a converted file that does not load) leaves
the original file in use, with a warning in the log.

**What loads is what was made.**  The packaged model is checked against its
pinned sha256 before it is converted; the conversion's own sha256 is written
beside it (``<file>.sha256``) and checked before every later load, and the
file must belong to this user and be writable by nobody else.  A conversion
that fails either check is thrown away and made again from the checked
original.  (A process running as the same user could rewrite both files; it
could as well rewrite ghosttype itself: see README, *Privacy*.)

**No AMX tiles.**  On a CPU with Intel AMX (Xeon Sapphire Rapids and later), a
llama.cpp built for the machine (``-march=native``, as pip builds
llama-cpp-python) repacks Q4_0, Q4_1, Q8_0 and K-quant weights into an "AMX"
buffer at load and multiplies them with tile instructions.  In
llama-cpp-python 0.3.36 (ggml 0.25.3) the first decode then kills the
process: SIGSEGV at ``ldtilecfg`` in ``ggml_backend_amx_mul_mat``, in an
OpenMP worker (seen on a 2-core Xeon virtual machine, SmolLM2 as Q4_1 and as
Q8_0; upstream ggml-org/llama.cpp#20824, and the fix proposed in #26954: the
workers never ask the kernel for the tile state, and the compiler drops the
tile configuration from the stack).  Where llama.cpp's CPU backend says it
has AMX kernels, models load with its extra buffer types off
(``use_extra_bufts``): the weights stay in ordinary CPU buffers, multiplied
by the AVX-512 kernels.  Elsewhere nothing changes (the AVX2 repacking of
Q4_0 and K-quants stays on).
"""

from __future__ import annotations

import ctypes
import functools
import glob
import hashlib
import logging
import os
import pathlib
import tempfile
from typing import Optional

import llama_cpp

from daemon.backends.llamacpp import models
from daemon.backends.llamacpp.models import ModelLoadError

log = logging.getLogger(__name__)

#: How llama.cpp's system information says that its CPU backend runs AMX kernels.
AMX_MARK = "AMX_INT8 = 1"

#: File types converted on load, and what to: measured per type (see the module docstring).
CONVERSIONS = {llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_1: (llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0, "q8_0")}


def converted_path(source: pathlib.Path, directory: pathlib.Path, suffix: str) -> pathlib.Path:
    """Where the conversion of ``source`` lives: named after the file, its
    size and modification time, so a changed model gets a new one."""
    st = source.stat()
    key = hashlib.sha256(f"{source.resolve()}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:12]
    return directory / f"{source.stem}.{key}.{suffix}.gguf"


def file_type(model) -> Optional[int]:
    """The loaded model's ``general.file_type`` (a ``LLAMA_FTYPE_*``), if it says."""
    buf = ctypes.create_string_buffer(32)
    if llama_cpp.llama_model_meta_val_str(model, b"general.file_type", buf, len(buf)) < 0:
        return None
    try:
        return int(buf.value.decode())
    except ValueError:
        return None


def _digest_file(target: pathlib.Path) -> pathlib.Path:
    return target.with_name(target.name + ".sha256")


def _trusted(target: pathlib.Path) -> bool:
    """Whether the conversion ``target`` is the file this user's ghosttype
    wrote (see "What loads is what was made"); hashed once per process."""
    try:
        for path in (target, target.parent):
            st = path.stat()
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                log.warning("the converted model %s is not this user's alone: converting again", target.name)
                return False
        expected = _digest_file(target).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return False
    if not models.has_digest(target, expected):
        log.warning("the converted model %s does not match its checksum: converting again", target.name)
        return False
    return True


@functools.lru_cache(maxsize=1)
def amx_kernels() -> bool:
    """Whether this llama.cpp's CPU backend runs AMX kernels here, which crash
    (see *No AMX tiles* above); logged once when it does."""
    found = AMX_MARK in llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    if found:
        log.info("llama.cpp's CPU backend has AMX kernels, which crash on their first use "
                 "(ggml-org/llama.cpp#20824): models load without repacking")
    return found


def _load_file(path: pathlib.Path):
    params = llama_cpp.llama_model_default_params()
    params.n_gpu_layers = 0
    params.use_extra_bufts = not amx_kernels()  # no AMX tiles (see the module docstring)
    return llama_cpp.llama_model_load_from_file(str(path).encode(), params) or None


def _convert(source: pathlib.Path, target: pathlib.Path, ftype: int, suffix: str) -> bool:
    """Write ``source`` converted to ``ftype`` as ``target``; False (logged) when it cannot."""
    tmp: Optional[pathlib.Path] = None
    try:
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
        os.close(fd)
        tmp = pathlib.Path(name)
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = ftype
        params.allow_requantize = True
        params.nthread = os.cpu_count() or 1
        if llama_cpp.llama_model_quantize(str(source).encode(), str(tmp).encode(), ctypes.byref(params)) != 0:
            log.warning("could not convert %s for faster loading: llama.cpp's quantizer failed", source.name)
            return False
        os.chmod(tmp, 0o600)
        digest = _digest_file(target)
        digest.write_text(models.sha256_of(tmp) + "\n", encoding="ascii")
        os.replace(tmp, target)
    except OSError as exc:
        log.warning("could not convert %s for faster loading into %s: %s", source.name, target.parent,
                    exc.strerror or exc)
        return False
    finally:
        if tmp is not None and tmp.exists():
            tmp.unlink()
    for stale in target.parent.glob(f"{glob.escape(source.stem)}.*.{suffix}.gguf"):
        if stale != target:  # an earlier version of the same model's conversion
            stale.unlink(missing_ok=True)
            _digest_file(stale).unlink(missing_ok=True)
    return True


def load(path: pathlib.Path, convert: bool = True, directory: Optional[pathlib.Path] = None):
    """``(model, file)``: the llama.cpp model of ``path`` and the file it was
    loaded from (its conversion, with ``convert``, where one applies)."""
    directory = directory if directory is not None else models.cache_dir()
    if convert:
        for _ftype, suffix in CONVERSIONS.values():
            done = converted_path(path, directory, suffix)
            if done.is_file() and not _trusted(done):
                done.unlink(missing_ok=True)
            elif done.is_file():
                model = _load_file(done)
                if model is not None:
                    return model, done
                log.warning("the converted model %s does not load: converting again", done)
                done.unlink(missing_ok=True)
    model = _load_file(path)
    if model is None:
        raise ModelLoadError(f"llama.cpp could not load {path} (corrupt, truncated or unsupported GGUF)")
    conversion = CONVERSIONS.get(file_type(model)) if convert else None
    if conversion is not None:
        target = converted_path(path, directory, conversion[1])
        log.info("converting %s to %s once, for faster suggestions (%s)", path.name, conversion[1].upper(), target)
        if _convert(path, target, *conversion):
            fast = _load_file(target)
            if fast is not None:
                llama_cpp.llama_model_free(model)
                return fast, target
            log.warning("the converted model %s does not load: using %s", target, path.name)
            target.unlink(missing_ok=True)
    return model, path
