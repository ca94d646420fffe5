"""Bad input from the user, as the commands and the benchmarks report it.

A :class:`UsageError` becomes one line on standard error and exit status
:data:`EXIT_USAGE`; the commands in :mod:`daemon.commands` catch it, the
benchmarks in :mod:`daemon.evaluation` and the model opener in
:mod:`daemon.backends.llamacpp.open` raise it.
"""

from __future__ import annotations

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input from the user; reported as one line with exit status 2."""
