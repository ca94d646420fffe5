"""The parts every frontend starts the same way: the configuration it begins
with, and the suggestion worker that loads the model on its own thread.

:class:`daemon.lifecycle.Lifecycle` starts them for ``ghosttype run`` (X11,
:mod:`daemon.frontends.overlay.app`) and ``ghosttype ibus run``
(:mod:`daemon.frontends.ibus.service`); tests build a
decoder with :func:`make_decoder_factory` directly.
"""

from __future__ import annotations

import logging
import pathlib
from typing import Callable, Optional

from daemon.config import Config, ConfigError, ensure_config_file, load_config
from daemon.controller import Controller
from daemon.memory.store import Memory
from daemon.backends.llamacpp.threads import MachineBusy
from daemon.worker import SuggestionWorker

log = logging.getLogger(__name__)


def make_decoder_factory(config: Config,
                         on_status: Optional[Callable[[str, str], None]] = None,
                         memory: Optional[Memory] = None) -> Callable[[], object]:
    """A callable that loads the configured model and returns a Decoder.  It
    runs on the worker thread, so the UI is up while the model loads.

    This is where the daemon picks its model backend: llama.cpp in this
    process (a ``TokenLM`` under the CPC decoder; with ``code_model`` a
    second one for fields that look like code), or with ``backend =
    "server"`` a serving engine (:mod:`daemon.backends.served`), with the
    local model as its fallback unless ``server_fallback = "none"``;
    ``on_status`` then hears where suggestions come from.  With a ``memory``
    (the ``learn`` setting), each local model's probabilities are mixed with
    what the user typed before (:mod:`daemon.memory.cache_lm`), and the rest
    of an earlier phrase is offered where the memory is sure of it
    (:mod:`daemon.memory.history`)."""

    def load(name: str) -> object:
        from daemon.cpc.beam import Decoder
        from daemon.backends.llamacpp.models import resolve_model
        from daemon.backends.llamacpp.open import open_model

        path = resolve_model(name)
        lm = open_model(str(path), n_seq_max=max(4, 2 * config.beam_width + 2), threads=config.threads)
        lm.warm_up()
        log.info("model loaded: %s", path.name)
        if memory is not None:
            from daemon.memory.cache_lm import MemoryLM
            from daemon.memory.history import with_history

            return with_history(Decoder(MemoryLM(lm, memory)), memory)
        return Decoder(lm)

    def build_local() -> object:
        """The main model, and with ``code_model`` a code model beside it
        (:mod:`daemon.code_route`).  A code model that cannot be loaded is
        logged and left out: the main model still suggests everywhere."""
        from daemon.backends.llamacpp.models import ModelLoadError
        from daemon.code_route import CodeRoute

        main = load(config.model)
        if not config.code_model or config.code_model == config.model:
            return main
        try:
            code = load(config.code_model)
        except ModelLoadError as e:
            log.warning("code_model %r not loaded, the main model suggests everywhere: %s", config.code_model,
                        (str(e).splitlines() or [type(e).__name__])[0])
            return main
        return CodeRoute(main, code)

    def build_served() -> object:
        from daemon.backends.served import open_route

        local = build_local() if config.server_fallback == "local" else None
        return open_route(config.server_url, engine=config.server_engine, model=config.server_model,
                          token_file=config.server_token_file, ca_file=config.server_ca_file,
                          deadline_ms=config.server_deadline_ms, logprobs=config.server_logprobs,
                          allow_insecure_http=config.allow_insecure_http, local=local, on_status=on_status)

    return build_served if config.backend == "server" else build_local


def load_startup_config(path: pathlib.Path, overrides: dict) -> tuple[Config, str]:
    """The config to start with, and an error message if the file is bad
    (then the defaults are used and the front end shows the error).  Writes
    the commented defaults first when the file does not exist."""
    try:
        ensure_config_file(path)
    except OSError as e:
        log.warning("cannot write the default config to %s: %s", path, e)
    try:
        base = load_config(path)
        error = ""
    except ConfigError as e:
        base, error = Config(), str(e)
    except OSError as e:
        base, error = Config(), f"{path}: cannot read: {e.strerror or e}"
    return base.with_overrides(**overrides), error


def new_worker(config: Config, controller: Controller,
               on_status: Optional[Callable[[str, str], None]] = None,
               memory: Optional[Memory] = None) -> SuggestionWorker:
    """A worker that loads the configured model on its own thread and reports
    to ``controller``; ``on_status(state, message)`` also hears its status
    (loading, ready, error), e.g. to notify the user of a model that failed;
    its decoder mixes in ``memory`` where one is given."""

    def report(state: str, message: str = "") -> None:
        controller.on_backend_status(state, message)
        if on_status is not None:
            on_status(state, message)

    return SuggestionWorker(
        decoder_factory=make_decoder_factory(config, report, memory),
        on_result=controller.on_result,
        on_status=report,
        debounce_ms=config.debounce_ms,
        busy=MachineBusy(),
    )
