"""Logging: a rotating file in the user log directory plus stderr.

Privacy rule for every module: log lengths, counts, ids and key names, never
typed text or suggestion content, at any level.  ``KeyEvent.__repr__``,
``ControllerState.__repr__`` and the worker's exception descriptions already
follow it; this module adds nothing that could undo it (no ``locals`` in
tracebacks, no capture of stdin).  The log folder is the user's alone (0700)
and so is every log file (0600), rotated ones included: a log names the
applications used and when.
"""

from __future__ import annotations

import faulthandler
import logging
import logging.handlers
import os
import pathlib
import signal
import sys
from typing import Optional, Union

APP_NAME = "ghosttype"
LOG_FILENAME = "ghosttype.log"
#: Beside the log: the threads' stacks at a fatal signal (a crash in llama.cpp, say) or on SIGUSR1.
STACKS_FILENAME = "stacks.txt"
_stacks_stream = None  #: the open stacks.txt (faulthandler writes to its descriptor: it must stay open)
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_HANDLER_TAG = "_ghosttype_handler"
#: The logger of the daemon's status lines (see ``daemon.notices``).
STATUS_LOGGER = "ghosttype.status"


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log file that only its owner can read (0600), whatever the
    umask, also when an earlier version left it readable by others."""

    def _open(self):  # type: ignore[override]  (logging's own hook for opening the file)
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)
        return os.fdopen(fd, "a", encoding=self.encoding, errors=self.errors)


def private_dir(directory: pathlib.Path) -> None:
    """Create ``directory`` (and its parents) and make it the owner's alone."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(directory, 0o700)


def default_log_dir() -> pathlib.Path:
    import platformdirs

    return pathlib.Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))


def parse_level(level: Union[str, int]) -> int:
    """``"warning"`` / ``"DEBUG"`` / ``20`` -> a logging level; ValueError otherwise."""
    if isinstance(level, int):
        return level
    value = logging.getLevelName(str(level).strip().upper())
    if not isinstance(value, int):
        raise ValueError(f"unknown log level {level!r}")
    return value


def setup_logging(
    level: Union[str, int] = "warning",
    log_dir: Optional[Union[str, pathlib.Path]] = None,
    to_file: bool = True,
    to_stderr: bool = True,
    max_bytes: int = 1_000_000,
    backups: int = 3,
) -> Optional[pathlib.Path]:
    """Configure the root logger; returns the log file path (None without one).

    Calling it again (e.g. after the config's ``log_level`` changed) replaces
    the handlers it installed before instead of adding more.  If the log
    directory cannot be created, logging continues on stderr only.
    """
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, _HANDLER_TAG, False):
            root.removeHandler(h)
            h.close()
    set_level(level)
    fmt = logging.Formatter(FORMAT)
    path: Optional[pathlib.Path] = None
    if to_stderr:
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(fmt)
        setattr(h, _HANDLER_TAG, True)
        root.addHandler(h)
    if to_file:
        directory = pathlib.Path(log_dir) if log_dir is not None else default_log_dir()
        try:
            private_dir(directory)
            path = directory / LOG_FILENAME
            fh = PrivateRotatingFileHandler(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
        except OSError as e:
            logging.getLogger(__name__).warning("cannot write a log file in %s (%s); logging to stderr only",
                                                directory, e.strerror or e)
            path = None
        else:
            fh.setFormatter(fmt)
            setattr(fh, _HANDLER_TAG, True)
            root.addHandler(fh)
    return path


#: Third-party libraries that are chatty at DEBUG (the file watcher logs every
#: inotify event, including writes to our own log file) stay at WARNING.
QUIET_LIBRARIES = ("watchdog", "PIL", "asyncio")


def set_level(level: Union[str, int]) -> None:
    """Change the level at run time (config reload)."""
    lvl = parse_level(level)
    logging.getLogger().setLevel(lvl)
    # Status lines (running, ready, paused, failed) show at the default level.
    logging.getLogger(STATUS_LOGGER).setLevel(logging.INFO if lvl <= logging.WARNING else lvl)
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(max(lvl, logging.WARNING))


def dump_stacks_on_fault(log_dir: Optional[Union[str, pathlib.Path]] = None) -> Optional[pathlib.Path]:
    """Where the process dies of a fatal signal (SIGSEGV, SIGABRT, ...), or is sent SIGUSR1 (a process that
    stopped answering, e.g. an IBus engine that gets no focus), every thread's stack goes to ``stacks.txt``
    beside the log (0600): file names, functions and line numbers, never a value, so never typed text.
    Returns the file (None where it cannot be opened; nothing is dumped then)."""
    directory = pathlib.Path(log_dir) if log_dir is not None else default_log_dir()
    try:
        private_dir(directory)
        path = directory / STACKS_FILENAME
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)
    except OSError:
        return None
    stream = os.fdopen(fd, "a", encoding="utf-8")
    faulthandler.enable(file=stream, all_threads=True)
    if hasattr(signal, "SIGUSR1"):  # not on Windows
        faulthandler.register(signal.SIGUSR1, file=stream, all_threads=True, chain=False)
    global _stacks_stream
    _stacks_stream = stream
    return path

