"""Opening a local model: the one place a :class:`~daemon.backends.llamacpp.llama.LlamaLM` is built.

The daemon's worker (:mod:`daemon.runtime`), ``ghosttype doctor`` and the
commands and benchmarks all open their model through :func:`open_model`.
:func:`resolve` and :func:`load_lm` are its command-line side: a model the
user named, whose failures are the user's input errors (:class:`UsageError`).

Importing this module does not load llama.cpp; opening a model does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from daemon.usage import UsageError

if TYPE_CHECKING:
    from daemon.backends.llamacpp.llama import LlamaLM

#: Context window (tokens) unless a caller needs another.
DEFAULT_N_CTX = 2048


def open_model(path: str, *, n_seq_max: int, n_ctx: int = DEFAULT_N_CTX, threads: Optional[int] = None,
               batch_threads: Optional[int] = None) -> "LlamaLM":
    """A ``LlamaLM`` on the GGUF file ``path`` with ``n_seq_max`` sequences
    (beams) in an ``n_ctx``-token context.  ``threads``: the threads it
    always uses, ``batch_threads``: the threads of batch decodes (None or 0:
    the backend's policy, :mod:`daemon.backends.llamacpp.threads`).  Raises
    :class:`~daemon.backends.llamacpp.models.ModelLoadError` for a file
    that is missing or not a model."""
    from daemon.backends.llamacpp.llama import LlamaLM

    return LlamaLM(path, n_ctx=n_ctx, n_seq_max=n_seq_max, n_threads=threads or None,
                   batch_threads=batch_threads or None)


def resolve(model: Optional[str]) -> str:
    """Path of the model file, or UsageError with the one-line fix."""
    from daemon.backends.llamacpp.models import ModelLoadError, resolve_model

    try:
        return str(resolve_model(model))
    except ModelLoadError as exc:
        raise UsageError(str(exc)) from None


def load_lm(model_path: str, n_seq_max: int = 8, batch_threads: Optional[int] = None) -> "LlamaLM":
    """:func:`open_model` for a command or benchmark; load failures become UsageError.
    ``batch_threads`` fixes the threads of batch decodes (default: by load)."""
    from daemon.backends.llamacpp.models import ModelLoadError

    try:
        return open_model(model_path, n_seq_max=n_seq_max, batch_threads=batch_threads)
    except ModelLoadError as exc:
        raise UsageError(str(exc)) from None
