"""One frontend's run, from start-up to shut-down, the same for every frontend.

``ghosttype run`` (:mod:`daemon.frontends.overlay.app`) and ``ghosttype ibus
run`` (:mod:`daemon.frontends.ibus.service`) each build their ports (the
sink, focus, injector, suppressor), their :class:`~daemon.controller.Controller`
on them, and run their own loop (Qt's event loop, the D-Bus connection's);
a :class:`Lifecycle` does the rest, in this order:

    load()             the config to start with (a bad file: the defaults, and
                       the error reported), and logging at its level
    adopt(controller)  the frontend's controller, and the stats recorder on its counts
    start()            the worker (it loads the model on its own thread), the
                       start-up config error shown, the controller started
    watch()            the config watcher and the stats recorder started
    ... the frontend's loop runs; a saved config file or a menu's change
    comes to on_config_change() -> apply() ...
    shutdown(...)      everything stopped in order, the frontend's parts around it

A reload sets the log level, the accept keys and the controller's config, and
loads the model on a new worker when the settings it was built from changed.
"""

from __future__ import annotations

import logging
import pathlib
import threading
from typing import Callable, Optional, Protocol, Sequence

from daemon.config import Config
from daemon.config_watch import ConfigWatcher
from daemon.controller import Controller
from daemon.logsetup import dump_stacks_on_fault, set_level, setup_logging
from daemon.memory.forget import ForgetWatcher
from daemon.memory.persist import MemoryKeeper
from daemon.memory.store import Memory
from daemon.notices import Notices
from daemon.runtime import load_startup_config, new_worker
from daemon.stats import StatsRecorder
from daemon.worker import SuggestionWorker

#: One part to stop: its name for the log, and how.
Step = tuple[str, Callable[[], None]]


class AcceptKeyGrab(Protocol):
    """What grabs the accept keys (the overlay's ``AcceptKeys``)."""

    def set_keys(self, keys: Sequence[str]) -> None:
        """Grab these from now on; ``ValueError`` for one it cannot, keeping the old."""


class Lifecycle:
    """The config, the worker, the config watcher and the stats of one
    frontend's controller.  ``notices`` hears the errors that need the user
    (a frontend without desktop notifications leaves it out); ``log`` is
    the frontend's logger, so each frontend's log reads as its own."""

    def __init__(self, config_path: pathlib.Path, overrides: dict, log_level: Optional[str] = None,
                 notices: Optional[Notices] = None, log: Optional[logging.Logger] = None) -> None:
        self.config_path = config_path
        self.overrides = overrides
        self.log_level = log_level
        self.notices = notices if notices is not None else Notices(None)
        self.log = log or logging.getLogger(__name__)
        self.config_error = ""
        self.controller: Optional[Controller] = None
        self.worker: Optional[SuggestionWorker] = None
        self.stats: Optional[StatsRecorder] = None
        self._config: Optional[Config] = None
        self._keys: Optional[AcceptKeyGrab] = None
        self._watcher: Optional[ConfigWatcher] = None
        self._worker_lock = threading.Lock()
        self._stopping = False
        #: what the user typed, learned while ``learn`` is not "off" (one for the process's life:
        #: the decoder mixes it in, the controller feeds it; "off" empties it)
        self.memory = Memory()
        self._keeper: Optional[MemoryKeeper] = None  #: the memory's file with ``learn = "persist"``
        self._forget: Optional[ForgetWatcher] = None  #: ``ghosttype forget`` and the settings' button

    # -- start-up, in this order -------------------------------------------------------

    def load(self) -> Config:
        """The config to start with; sets up logging at its level."""
        self._config, self.config_error = load_startup_config(self.config_path, self.overrides)
        log_file = setup_logging(self.log_level or self._config.log_level)
        dump_stacks_on_fault(log_file.parent if log_file is not None else None)
        if self.config_error:
            self.log.error("config: %s (using defaults until it is fixed)", self.config_error.splitlines()[0])
        return self._config

    def adopt(self, controller: Controller, keys: Optional[AcceptKeyGrab] = None) -> StatsRecorder:
        """Take the frontend's controller (built on the config :meth:`load`
        returned) and what grabs its accept keys, where the frontend grabs
        them (the overlay); returns the stats recorder on its counts (not
        started yet)."""
        self.controller = controller
        self._keys = keys
        controller.set_memory(self._learning(controller.config))
        self.stats = StatsRecorder(controller.counters, lambda: controller.config.stats)
        return self.stats

    def start(self) -> None:
        """The worker, loading the model on its own thread; then the start-up
        config error shown and the controller started."""
        controller, config = self._adopted(), self._config
        assert config is not None, "load() first"
        # persist: the memory's file loaded on the keeper's thread; session and off: a file left over deleted
        self._keeper = MemoryKeeper(self.memory, config.learn, on_warning=self.notices.memory_warning)
        self._keeper.start()
        self.worker = self._new_worker(config)
        controller.attach_worker(self.worker)
        self.worker.start()
        if self.config_error:
            controller.on_config_error(self.config_error)
            self.notices.config_error(self.config_error.splitlines()[0])
        controller.start()

    def watch(self) -> None:
        """Follow the config file; start counting into the stats file."""
        self._watcher = ConfigWatcher(self.config_path, on_change=self.on_config_change,
                                      on_error=self.on_config_error, current=self._config)
        self._watcher.start()
        assert self._keeper is not None, "start() first"
        self._forget = ForgetWatcher(self._keeper.forget)
        self._forget.start()
        assert self.stats is not None
        self.stats.start()

    # -- while running -----------------------------------------------------------------

    def on_config_change(self, config: Config) -> None:
        """A valid config from the file or a menu: the command line's
        overrides on top, applied."""
        self.notices.config_ok()
        self.apply(config.with_overrides(**self.overrides))

    def on_config_error(self, message: str) -> None:
        """The config file became invalid: the previous settings stay."""
        if self.controller is not None:
            self.controller.on_config_error(message)
        self.notices.config_error(message)

    def apply(self, config: Config) -> None:
        """Apply ``config`` (overrides included) to the running frontend."""
        controller = self.controller
        if controller is None or self.worker is None or self._stopping:
            return
        old = controller.config
        set_level(config.log_level if self.log_level is None else self.log_level)
        if (config.accept_key, config.accept_word_key) != (old.accept_key, old.accept_word_key):
            if self._keys is not None:  # the IBus engine reads them from the config at each key
                self._keys.set_keys((config.accept_key, config.accept_word_key))
        controller.apply_config(config)
        if config.learn != old.learn:
            if config.learn == "off":
                self.memory.clear()  # at once, not when the keeper's thread gets to it
            if self._keeper is not None:
                self._keeper.apply(config.learn)  # leaving "persist" deletes the file and its key
            controller.set_memory(self._learning(config))
        if config.worker_settings() != old.worker_settings() or (config.learn == "off") != (old.learn == "off"):
            # A different model (or more beams than the context has sequences
            # for) needs a new backend: load it on a new worker, drop the old.
            with self._worker_lock:
                old_worker = self.worker
                self.worker = self._new_worker(config)
                controller.attach_worker(self.worker)
                self.worker.start()
            old_worker.stop()
            self.log.info("model settings changed: reloading the model")

    # -- shut-down ---------------------------------------------------------------------

    def shutdown(self, inputs: Sequence[Step] = (), links: Sequence[Step] = (),
                 outputs: Sequence[Step] = ()) -> None:
        """Stop, in order: the frontend's ``inputs`` (what feeds the
        controller), the config and forget watchers, the frontend's ``links``
        (what the sink draws through), the controller, the memory (its file
        saved one last time with ``persist``), the stats (written one last
        time), the worker, and the frontend's ``outputs``.  A part that fails
        to stop is logged and the rest still stop."""
        self._stopping = True
        controller, stats, watcher = self._adopted(), self.stats, self._watcher
        forget, keeper = self._forget, self._keeper
        assert stats is not None and watcher is not None and forget is not None and keeper is not None, \
            "watch() first"
        for step, action in (*inputs, ("config watcher", watcher.stop), ("forget watcher", forget.stop), *links,
                             ("controller", controller.close), ("memory", keeper.stop), ("stats", stats.stop),
                             ("worker", self._stop_worker), *outputs):
            try:
                action()
            except Exception:
                self.log.exception("stopping the %s failed", step)

    # -- parts -------------------------------------------------------------------------

    def _adopted(self) -> Controller:
        assert self.controller is not None, "adopt() first"
        return self.controller

    def _learning(self, config: Config) -> Optional[Memory]:
        """The memory the controller learns into and the decoder reads: none with ``learn = "off"``."""
        return None if config.learn == "off" else self.memory

    def _new_worker(self, config: Config) -> SuggestionWorker:
        return new_worker(config, self._adopted(), on_status=self.notices.backend_status,
                          memory=self._learning(config))

    def _stop_worker(self) -> None:
        if self.worker is not None:
            self.worker.stop()
