"""A served model: suggestions from a serving engine (llama.cpp's server,
vLLM) over the OpenAI-compatible ``/v1/completions`` API.

* ``wire``: request bodies (the typed part forced by a GBNF grammar or a
  regular expression) and the parsing of streamed answers; no I/O.
* ``endpoint``: which URLs may carry typed text (``http://`` only to loopback
  unless allowed).
* ``client``: one kept-alive connection, streams aborted from outside and
  bounded in time and size, TLS verified, the bearer token.
* ``completer``: the worker's ``Completer``: split, stream, the suggestion
  and its confidence.
* ``route``: the server first, the local model while the server is
  unreachable or slow, and back.

Nothing here imports llama.cpp; :func:`daemon.runtime.make_decoder_factory`
and the command line build it.
"""

from __future__ import annotations

from typing import Any, Callable, Optional


def open_route(url: str, *, engine: str = "llama.cpp", model: str = "", token_file: str = "",
               ca_file: str = "", deadline_ms: float = 0.0, logprobs: bool = True,
               allow_insecure_http: bool = False, local: Optional[Any] = None,
               on_status: Optional[Callable[[str, str], None]] = None) -> Any:
    """A :class:`~daemon.backends.served.route.ServedRoute` to the server at
    ``url``, already on the local model when the server does not answer now.
    A token file that cannot be read (or that other users may read) raises
    ``ServerError``; ``http://`` to another machine without
    ``allow_insecure_http``, ValueError."""
    from .client import Server, ServerError, read_token
    from .completer import ServedCompleter
    from .route import ServedRoute

    server = Server(url, read_token(token_file) if token_file else None, ca_file,
                    allow_insecure_http=allow_insecure_http)
    route = ServedRoute(ServedCompleter(server, engine, model, deadline_ms, logprobs), local, on_status)
    problem = server.probe()
    if problem is not None:
        route.leave(ServerError("unreachable", problem))
    return route
