"""Live reload of the config file.

watchdog watches the file's *directory*, not the file: editors save by
writing a new file and renaming it over the old one, which a watch on the old
inode would miss.  Where the file is a symbolic link, the directory of the
file it leads to is watched as well (ghosttype saves through the link).  Bursts of events (write, chmod, rename) are debounced into
one reload.  A valid file is handed to ``on_change`` (only when it differs from
the last good one); an invalid one is reported through ``on_error`` and the
last good config stays in force.  Callbacks run on a timer thread.

Only events that can change the file's content count: watchdog also reports
opening and closing a file without writing, and reading the file to reload it
would otherwise schedule the next reload, forever (an invalid file was reported
every debounce interval).  An invalid file is reported once per distinct
content: saving the same broken bytes again, or any event that leaves them
unchanged, says nothing new.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pathlib
import threading
from typing import Callable, Optional, Union

from daemon.config import Config, ConfigError, load_config

log = logging.getLogger(__name__)

#: watchdog event types that may change what the file holds (not "opened",
#: "closed_no_write": our own reload would trigger those).
CONTENT_EVENTS = frozenset({"created", "modified", "moved", "deleted", "closed"})


def content_signature(path: pathlib.Path) -> Optional[str]:
    """A digest of the file's bytes, or None when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


class ConfigWatcher:
    """Watches one config file; see the module docstring."""

    def __init__(
        self,
        path: Union[str, pathlib.Path],
        on_change: Callable[[Config], None],
        on_error: Callable[[str], None],
        current: Optional[Config] = None,
        debounce_s: float = 0.15,
    ) -> None:
        self.path = pathlib.Path(path).absolute()
        self._on_change = on_change
        self._on_error = on_error
        self._debounce_s = debounce_s
        self._lock = threading.Lock()
        self._timer: Optional[threading.Timer] = None
        self._observer = None
        self.last_good: Optional[Config] = current
        self.reloads = 0
        self._in_error = False
        self._reported_error: Optional[tuple[Optional[str], str]] = None  #: (content, message)

    def start(self) -> None:
        """Start watching (creates the directory if needed)."""
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        watcher = self

        class _Handler(FileSystemEventHandler):
            def on_any_event(self, event) -> None:  # type: ignore[no-untyped-def]
                if getattr(event, "event_type", "modified") not in CONTENT_EVENTS:
                    return
                paths = {getattr(event, "src_path", ""), getattr(event, "dest_path", "")}
                if any(p and os.path.abspath(os.fsdecode(p)) in watched for p in paths):
                    watcher.schedule()

        self.path.parent.mkdir(parents=True, exist_ok=True)
        # A config file that is a link is saved where it leads (daemon.atomic_write): watch there too.
        watched = {str(self.path), os.path.realpath(self.path)}
        observer = Observer()
        for directory in sorted({os.path.dirname(p) for p in watched}):
            if os.path.isdir(directory):
                observer.schedule(_Handler(), directory, recursive=False)
        observer.daemon = True
        observer.start()
        self._observer = observer

    def stop(self, timeout: float = 2.0) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout)
            self._observer = None

    def schedule(self) -> None:
        """Reload after the debounce interval (restarted by every event)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self._debounce_s, self.reload)
            self._timer.daemon = True
            self._timer.start()

    def reload(self) -> Optional[Config]:
        """Load the file now; returns the new config when it changed."""
        try:
            cfg = load_config(self.path)
        except ConfigError as e:
            self._in_error = True
            report = (content_signature(self.path), e.first_line)
            if report != self._reported_error:  # once per distinct broken content
                self._reported_error = report
                log.error("config file invalid, keeping the previous settings:\n%s", e)
                self._call(self._on_error, e.first_line)
            return None
        self._reported_error = None
        self.reloads += 1
        if cfg == self.last_good and not self._in_error:
            return None
        self._in_error = False  # a valid file also clears a reported error
        self.last_good = cfg
        log.info("config reloaded from %s", self.path)
        self._call(self._on_change, cfg)
        return cfg

    @staticmethod
    def _call(fn: Callable, arg: object) -> None:
        try:
            fn(arg)
        except Exception:
            log.exception("config callback failed")
