"""The llama.cpp backend: a :class:`daemon.cpc.lm.TokenLM` over the C API.

This module and :mod:`daemon.backends.llamacpp.weights` (which loads the
model file, converted once where that makes it faster) are the only ones of
ghosttype that import ``llama_cpp``.  It uses the
low-level bindings rather than ``llama_cpp.Llama`` because the decoder needs
what that class hides: several sequences in one context sharing their common
prefix in a *unified* KV cache, every beam of a step decoded in one
``llama_decode`` call, and a cancel check between decode chunks.

How a request is served (``logprobs``):

* rows for sequences evaluated recently come from a small LRU of
  log-probability rows (typing inside a word re-asks for the same stable
  prefix on every keystroke: that costs nothing);
* the others get a sequence slot planned by :mod:`daemon.backends.llamacpp.slots`: reuse of
  the slot with the longest common token prefix, ``llama_memory_seq_cp`` to
  fork it, ``llama_memory_seq_rm`` to drop what diverges;
* all new tokens of all sequences are decoded together, in chunks of at most
  ``chunk_tokens`` tokens; ``cancel()`` is polled before each chunk.  The slot
  bookkeeping is updated after every chunk, so a cancelled prefill keeps what
  it already decoded and the next request continues from there.

Thread safety: every public method holds one lock.  In the daemon a single
worker thread uses the backend, but ``close`` may come from another thread.
"""

from __future__ import annotations

import collections
import ctypes
import logging
import os
import pathlib
import threading
from typing import Callable, Optional, Sequence, Union

import llama_cpp
import numpy as np

from daemon.cpc.lm import CancelCheck, Cancelled, LMStats
from daemon.backends.llamacpp import weights
from daemon.backends.llamacpp.models import ModelLoadError, check_gguf
from daemon.backends.llamacpp.slots import CapacityError, SlotTable, schedule
from daemon.backends.llamacpp.threads import BatchThreads

__all__ = ["LlamaLM", "ModelLoadError"]

log = logging.getLogger(__name__)
_native_log = logging.getLogger("daemon.backends.llamacpp.llama_cpp")

# --------------------------------------------------------------------------- logging
# llama.cpp prints model metadata and timings to stderr unless a callback is
# installed; importing llama_cpp installs one that prints too.  Everything it
# says goes to Python logging at DEBUG instead (warnings and errors included:
# the failures that matter surface as exceptions with a clear message).


@llama_cpp.llama_log_callback
def _log_to_python(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:  # pragma: no cover - called from C
    try:
        if _native_log.isEnabledFor(logging.DEBUG):
            _native_log.debug("%s", text.decode("utf-8", errors="replace").rstrip("\n"))
    except Exception:  # never let an exception cross into C
        pass


llama_cpp.llama_log_set(_log_to_python, ctypes.c_void_p(0))

_backend_lock = threading.Lock()
_backend_ready = False


def _init_backend() -> None:
    global _backend_ready
    with _backend_lock:
        if not _backend_ready:
            llama_cpp.llama_backend_init()
            _backend_ready = True


# Token attributes that never appear in typed text.  USER_DEFINED tokens are
# deliberately *kept*: llama.cpp matches them in plain text even without
# parse_special, and some vocabularies use them for ordinary text (Gemma 3's
# runs of spaces and newlines, HTML tags), so they are produced by tokenize()
# and the decoder must know their bytes.
_EXCLUDED_ATTRS = (
    llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN
    | llama_cpp.LLAMA_TOKEN_ATTR_UNUSED
    | llama_cpp.LLAMA_TOKEN_ATTR_CONTROL
)

#: Budget for the LRU of log-probability rows (one row is n_vocab float32).
_ROWS_CACHE_BYTES = 32 * 1024 * 1024


def default_threads() -> int:
    """Threads for the model when none are configured: half the cores, 1 to 4.

    ghosttype runs beside whatever the user is doing.  llama.cpp's worker
    threads meet at a barrier for every graph node, so when the CPU is busy a
    descheduled thread stalls the others: measured on a loaded 2-core machine,
    one SmolLM2 step took 24 ms with 1 thread and 40-1230 ms with 2.  Leaving
    half the cores free keeps suggestions fast while the user compiles.
    """
    return max(1, min(4, (os.cpu_count() or 2) // 2))


class LlamaLM:
    """A llama.cpp model with ``n_seq_max`` sequence slots in one context.

    ``n_ctx`` is the longest sequence (BOS included) and also the KV budget
    shared by all slots (the cache is unified, so a prefix shared by several
    beams is stored once).  ``chunk_tokens`` bounds the work between two
    cancel checks: at ~4 ms per token on SmolLM2 (2 cores), 64 tokens is
    ~0.25 s.  ``flash_attn`` is off by default: on CPU it makes results depend
    more on how tokens were split into batches (daemon/cpc/README.md).
    ``convert_weights``: a Q4_1 model is loaded from its Q8_0 conversion
    (made once in the model cache; :mod:`daemon.backends.llamacpp.weights`),
    ``weights_path`` says which file was loaded.

    Threads: by default every decode asks
    :class:`daemon.backends.llamacpp.threads.BatchThreads`: batches get ``n_threads`` plus
    the cores other processes leave idle, one-token steps get the extra
    cores only while the rest of the machine is nearly idle, so an idle
    2-core machine decodes one token with 2 threads (10.8 instead of 18.7 ms
    a step for SmolLM2 here) and a busy one with ``n_threads`` (a descheduled
    thread stalls llama.cpp's barriers); a ``BatchThreads`` passed as
    ``batch_threads`` does the same.  Any other ``batch_threads`` (an int, or a callable asked
    before every decode of more than one token) governs only the decodes of
    more than one token; single-token decodes then keep ``n_threads``.
    """

    def __init__(
        self,
        model_path: str,
        n_ctx: int = 2048,
        n_seq_max: int = 8,
        n_threads: Optional[int] = None,
        *,
        chunk_tokens: int = 64,
        flash_attn: bool = False,
        rows_cache_bytes: int = _ROWS_CACHE_BYTES,
        batch_threads: Union[None, int, Callable[[], int]] = None,
        convert_weights: bool = True,
    ) -> None:
        if n_ctx < 8:
            raise ValueError(f"n_ctx must be at least 8, got {n_ctx}")
        if not 1 <= n_seq_max <= 64:
            raise ValueError(f"n_seq_max must be between 1 and 64, got {n_seq_max}")
        if chunk_tokens < n_seq_max:
            raise ValueError("chunk_tokens must be at least n_seq_max (one beam step is one batch)")
        self._lock = threading.RLock()
        self._model = None
        self._ctx = None
        self._batch = None
        self._stats = LMStats()
        self.model_path = pathlib.Path(model_path)
        check_gguf(self.model_path)
        _init_backend()
        model, self.weights_path = weights.load(self.model_path, convert=convert_weights)
        self._model = model
        try:
            threads = n_threads if n_threads and n_threads > 0 else default_threads()
            cparams = llama_cpp.llama_context_default_params()
            cparams.n_ctx = n_ctx
            cparams.n_batch = chunk_tokens
            cparams.n_ubatch = chunk_tokens
            cparams.n_seq_max = n_seq_max
            cparams.n_threads = threads
            cparams.n_threads_batch = threads
            self._threads = threads
            self._threads_batch = threads
            if batch_threads is None:
                batch_threads = BatchThreads(threads)
            #: single-token decodes follow the load too (only with the load policy)
            self._single_policy: Optional[Callable[[], int]] = (
                batch_threads.single if isinstance(batch_threads, BatchThreads) else None)
            self._batch_threads: Callable[[], int] = (
                batch_threads if callable(batch_threads) else (lambda n=max(1, int(batch_threads)): n)
            )
            cparams.kv_unified = True
            cparams.swa_full = True  # sliding-window models (Gemma 3) must keep trimmable history
            cparams.flash_attn_type = (
                llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash_attn else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
            )
            cparams.no_perf = True
            ctx = llama_cpp.llama_init_from_model(model, cparams)
            if not ctx:
                raise ModelLoadError(
                    f"llama.cpp could not create a context for {self.model_path} "
                    f"(n_ctx={n_ctx}, n_seq_max={n_seq_max}; out of memory?)"
                )
            self._ctx = ctx
            self._mem = llama_cpp.llama_get_memory(ctx)
            self._vocab = llama_cpp.llama_model_get_vocab(model)
            self._n_vocab = int(llama_cpp.llama_vocab_n_tokens(self._vocab))
            self._n_ctx = n_ctx
            self._n_seq_max = n_seq_max
            self._chunk = chunk_tokens
            self._batch = llama_cpp.llama_batch_init(chunk_tokens, 0, 1)
            self._table = SlotTable(n_seq_max, int(llama_cpp.llama_n_ctx(ctx)))
            bos = int(llama_cpp.llama_vocab_bos(self._vocab))
            eos = int(llama_cpp.llama_vocab_eos(self._vocab))
            self._prefix: tuple[int, ...] = (
                (bos,) if llama_cpp.llama_vocab_get_add_bos(self._vocab) and bos >= 0 else ()
            )
            # An empty context still needs one token to condition on.
            self._empty_context = self._prefix or ((bos,) if bos >= 0 else (eos,))
            self._rows: "collections.OrderedDict[tuple[int, ...], np.ndarray]" = collections.OrderedDict()
            self._rows_max = max(2 * n_seq_max, rows_cache_bytes // (4 * self._n_vocab))
            self._token_bytes: Optional[tuple[Optional[bytes], ...]] = None
            self._eog: Optional[frozenset[int]] = None
            #: Where the last ``logprobs`` call decoded: ``(sequence, start)``
            #: for each requested sequence that was decoded at all, meaning
            #: ``sequence[start:]`` went through the model (``start`` < 0 when
            #: the backend's BOS was decoded too).  Benchmarks read it to count
            #: tokens decoded twice; the decoder never does.
            self.decoded_from: list[tuple[tuple[int, ...], int]] = []
        except BaseException:
            self.close()
            raise
        log.info(
            "loaded model %s%s: n_vocab=%d n_ctx=%d n_seq_max=%d threads=%d (batches: %s) bos=%s",
            self.model_path.name,
            f" (from {self.weights_path.name})" if self.weights_path != self.model_path else "",
            self._n_vocab, n_ctx, n_seq_max, threads,
            batch_threads if isinstance(batch_threads, int) else "by load",
            bool(self._prefix),
        )

    # ------------------------------------------------------------------ TokenLM
    @property
    def n_vocab(self) -> int:
        return self._n_vocab

    @property
    def n_ctx(self) -> int:
        return self._n_ctx

    @property
    def stats(self) -> LMStats:
        return self._stats

    @property
    def adds_bos(self) -> bool:
        """True when a BOS token is prepended to every sequence internally."""
        return bool(self._prefix)

    def token_bytes(self) -> Sequence[Optional[bytes]]:
        with self._lock:
            self._check_open()
            if self._token_bytes is None:
                self._token_bytes = tuple(self._piece(t) for t in range(self._n_vocab))
            return self._token_bytes

    def eog_ids(self) -> frozenset[int]:
        with self._lock:
            self._check_open()
            if self._eog is None:
                self._eog = frozenset(
                    t for t in range(self._n_vocab) if llama_cpp.llama_vocab_is_eog(self._vocab, t)
                )
            return self._eog

    def tokenize(self, text: str) -> list[int]:
        # Lone surrogates (possible in text from some input methods) would make
        # llama.cpp's UTF-8 decoder throw across the C boundary: replace them.
        data = text.encode("utf-8", errors="replace")
        if not data:
            return []
        with self._lock:
            self._check_open()
            cap = len(data) + 8
            for _ in range(2):
                buf = (llama_cpp.llama_token * cap)()
                n = llama_cpp.llama_tokenize(self._vocab, data, len(data), buf, cap, False, False)
                if n >= 0:
                    return list(buf[:n])
                cap = -n
            raise RuntimeError("llama_tokenize kept asking for a larger buffer")  # pragma: no cover

    def cached_tokens(self, seq: Sequence[int]) -> int:
        """How many leading tokens of ``seq`` (given without BOS, as to
        :meth:`logprobs`) some sequence slot already holds: asking for
        ``seq`` decodes only the rest."""
        key = tuple(int(t) for t in seq)
        if not key:
            return 0
        with self._lock:
            self._check_open()
            if key in self._rows:
                return len(key)
            full = self._full(key)
            return max(0, self._table.cached_prefix(full) - (len(full) - len(key)))

    @property
    def threads(self) -> tuple[int, int]:
        """Threads of the last single-token and batch decodes."""
        return self._threads, self._threads_batch

    def logprobs(
        self, seqs: Sequence[Sequence[int]], cancel: Optional[CancelCheck] = None
    ) -> np.ndarray:
        """Next-token log-probabilities after each sequence, shape
        ``(len(seqs), n_vocab)`` float32.  See the module docstring."""
        keys = [tuple(int(t) for t in s) for s in seqs]
        for k in keys:
            self._validate(k)
        out = np.empty((len(keys), self._n_vocab), dtype=np.float32)
        with self._lock:
            self._check_open()
            self.decoded_from = []
            todo: list[tuple[int, ...]] = []
            for k in keys:
                if k in self._rows:
                    self._rows.move_to_end(k)
                    self._stats.logits_cache_hits += 1
                elif k not in todo:
                    todo.append(k)
            for start in range(0, len(todo), self._n_seq_max):
                self._evaluate(todo[start : start + self._n_seq_max], cancel)
            for i, k in enumerate(keys):
                out[i] = self._rows[k]
        return out

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Free the context, the model and the batch (idempotent)."""
        with self._lock:
            if self._batch is not None:
                llama_cpp.llama_batch_free(self._batch)
                self._batch = None
            if self._ctx is not None:
                llama_cpp.llama_free(self._ctx)
                self._ctx = None
            if self._model is not None:
                llama_cpp.llama_model_free(self._model)
                self._model = None

    def __enter__(self) -> "LlamaLM":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort at interpreter exit
        try:
            self.close()
        except Exception:
            pass

    def warm_up(self) -> None:
        """Decode a short text (a batch, then one token) and forget it.  The
        first decode after loading pays for paging the weights in and sizing
        llama.cpp's compute buffers (tens of milliseconds to seconds when the
        file is not in the page cache); this moves that cost to start-up."""
        tokens = self.tokenize("Hello, world. This is")
        self.logprobs([tokens])
        self.logprobs([tokens + tokens[-1:]])
        self.clear_cache()

    def clear_cache(self) -> None:
        """Drop every cached token and logits row (benchmarks use it to time
        cold requests)."""
        with self._lock:
            self._check_open()
            llama_cpp.llama_memory_clear(self._mem, True)
            self._table.clear()
            self._rows.clear()

    # ------------------------------------------------------------------ internals
    def _check_open(self) -> None:
        if self._ctx is None:
            raise RuntimeError("the model was closed")

    def _validate(self, seq: tuple[int, ...]) -> None:
        full = len(self._prefix) + len(seq) if seq else len(self._empty_context)
        if full > self._n_ctx:
            raise ValueError(
                f"sequence of {full} tokens does not fit the context window of "
                f"{self._n_ctx} tokens; keep only the most recent text"
            )
        for t in seq:
            if not 0 <= t < self._n_vocab:
                raise ValueError(f"token id {t} is outside the vocabulary (0..{self._n_vocab - 1})")

    def _full(self, seq: tuple[int, ...]) -> tuple[int, ...]:
        return self._prefix + seq if seq else self._empty_context

    def _evaluate(self, keys: list[tuple[int, ...]], cancel: Optional[CancelCheck]) -> None:
        """Decode ``keys`` (distinct, uncached, at most n_seq_max) into the row LRU."""
        fulls = [self._full(k) for k in keys]
        try:
            plan = self._table.plan(fulls)
        except CapacityError:
            if len(keys) == 1:  # pragma: no cover - a single valid sequence always fits
                raise
            half = len(keys) // 2
            self._evaluate(keys[:half], cancel)
            self._evaluate(keys[half:], cancel)
            return
        for c in plan.copies:
            llama_cpp.llama_memory_seq_rm(self._mem, c.dst, -1, -1)
            if c.n > 0:
                llama_cpp.llama_memory_seq_cp(self._mem, c.src, c.dst, 0, c.n)
        for t in plan.trims:
            if not llama_cpp.llama_memory_seq_rm(self._mem, t.slot, t.n, -1):
                self._reset()
                raise RuntimeError("llama.cpp refused to trim a sequence (recurrent model?)")
        for e in plan.evictions:
            llama_cpp.llama_memory_seq_rm(self._mem, e, -1, -1)
        self._table.apply(plan)
        self.decoded_from.extend(
            (k, a.start - (len(full) - len(k))) for k, a, full in zip(keys, plan.assignments, fulls) if a.start < len(full)
        )

        batch = self._batch
        for entries in schedule(fulls, plan.assignments, self._chunk):
            if cancel is not None and cancel():
                raise Cancelled()
            for i, e in enumerate(entries):
                batch.token[i] = e.token
                batch.pos[i] = e.pos
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = e.slot
                batch.logits[i] = 1 if e.output is not None else 0
            batch.n_tokens = len(entries)
            if len(entries) > 1 or self._single_policy is not None:
                self._choose_threads(batch=len(entries) > 1)
            rc = llama_cpp.llama_decode(self._ctx, batch)
            if rc != 0:
                self._reset()
                raise RuntimeError(f"llama_decode failed (code {rc}); the cache was cleared")
            self._stats.decode_calls += 1
            self._stats.tokens_decoded += len(entries)
            for i, e in enumerate(entries):
                self._table.append(e.slot, e.token)
                if e.output is not None:
                    self._store_row(keys[e.output], self._read_row(i))

    def _choose_threads(self, batch: bool) -> None:
        """Ask the thread policy before a decode: the batch count, and with
        the default policy the single-token count too."""
        try:
            many = max(1, int(self._batch_threads())) if batch else self._threads_batch
            single = max(1, int(self._single_policy())) if self._single_policy is not None else self._threads
        except Exception as e:  # a failing policy must not stop decoding
            log.debug("thread policy failed: %s", type(e).__name__)
            return
        if (single, many) != (self._threads, self._threads_batch):
            llama_cpp.llama_set_n_threads(self._ctx, single, many)
            self._threads, self._threads_batch = single, many

    def _read_row(self, index: int) -> np.ndarray:
        ptr = llama_cpp.llama_get_logits_ith(self._ctx, index)
        if not ptr:  # pragma: no cover - only if logits were not requested
            raise RuntimeError(f"llama.cpp returned no logits for batch row {index}")
        logits = np.ctypeslib.as_array(ptr, shape=(self._n_vocab,)).astype(np.float32)
        logits -= logits.max()
        logits -= np.float32(np.log(np.exp(logits, dtype=np.float64).sum()))
        return logits

    def _store_row(self, key: tuple[int, ...], row: np.ndarray) -> None:
        self._rows[key] = row
        self._rows.move_to_end(key)
        while len(self._rows) > self._rows_max:
            self._rows.popitem(last=False)

    def _reset(self) -> None:
        """After a failed decode the cache content is unknown: start over."""
        llama_cpp.llama_memory_clear(self._mem, True)
        self._table.clear()

    def _piece(self, token: int) -> Optional[bytes]:
        attr = int(llama_cpp.llama_vocab_get_attr(self._vocab, token))
        if attr == llama_cpp.LLAMA_TOKEN_ATTR_UNDEFINED or attr & _EXCLUDED_ATTRS:
            return None
        if llama_cpp.llama_vocab_is_eog(self._vocab, token):
            return None
        size = 64
        while True:
            buf = ctypes.create_string_buffer(size)
            n = llama_cpp.llama_token_to_piece(self._vocab, token, buf, size, 0, False)
            if n >= 0:
                return buf.raw[:n] or None
            size = -n
