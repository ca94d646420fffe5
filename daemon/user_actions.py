"""What the tray and the IBus input-source menu offer besides on/off and
pause: "Off in <application>", "Settings..." and the counts of what
ghosttype saved.  Plain Python, shared by both frontends; the menus call it
on their own threads (the Qt GUI thread, the IBus D-Bus thread).

"Off in <application>" writes the denylist into the config file
(:func:`daemon.config_edit.toggle_denied`, comments and order kept) and
applies the new config at once through ``apply``, the same path a saved file
takes; the config watcher then finds nothing new.
"""

from __future__ import annotations

import logging
import pathlib
from dataclasses import dataclass
from typing import Callable, Optional

from daemon.config import Config, ConfigError
from daemon.config_edit import toggle_denied
from daemon.launch import open_settings
from daemon.stats import StatsRecorder, short_line

log = logging.getLogger(__name__)


@dataclass
class UserActions:
    config_path: pathlib.Path
    config: Callable[[], Config]  #: the config in force
    apply: Callable[[Config], None]  #: apply a config just written, at once
    stats: Optional[StatsRecorder] = None
    last_app: Callable[[], str] = lambda: ""  #: the application that last had the focus ("" unknown)

    def is_denied(self, app_id: str) -> bool:
        return self.config().is_denied(app_id)

    def toggle_app(self, app_id: str) -> Optional[bool]:
        """Turn ghosttype off in ``app_id`` (or on again); returns whether it
        is off there now, or None when the config file could not be changed
        (the reason is logged and shown like any config error)."""
        try:
            denied, config = toggle_denied(app_id, self.config_path)
        except (ConfigError, OSError) as e:
            log.error("cannot change the denylist: %s", str(e).splitlines()[0] if str(e) else type(e).__name__)
            return None
        log.info("ghosttype %s in %s", "off" if denied else "on", app_id)
        self.apply(config)
        return denied

    def open_settings(self) -> None:
        open_settings(self.config_path)

    def stats_line(self) -> str:
        """Today's counts in one line ("" when counting is off)."""
        if self.stats is None or not self.config().stats:
            return ""
        return "Today: " + short_line(self.stats.today())
