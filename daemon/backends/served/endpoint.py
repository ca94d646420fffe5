"""Which server URLs may carry typed text: ``https://`` anywhere, ``http://``
only to this machine (loopback) unless the user said otherwise explicitly.

Plain HTTP sends what is typed and the bearer token in clear to every hop on
the way; on loopback nothing leaves the machine.  Pure (stdlib only), so the
config's validation and the client apply the same rule.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from typing import Optional

#: The config key that accepts ``http://`` to another machine.
ALLOW_KEY = "allow_insecure_http"


def is_loopback(host: str) -> bool:
    """``localhost`` or an address of the loopback network (127.0.0.0/8, ::1)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def cleartext_problem(url: str, allow_insecure_http: bool = False) -> Optional[str]:
    """Why ``url`` must not be used (None: it may): ``http://`` to a host that
    is not loopback, unless ``allow_insecure_http``."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or allow_insecure_http or is_loopback(parts.hostname or ""):
        return None
    return (f"http:// to {parts.hostname} sends what you type and the server token in clear: "
            f"use https://, or set {ALLOW_KEY} = true to accept it")


__all__ = ["ALLOW_KEY", "cleartext_problem", "is_loopback"]
