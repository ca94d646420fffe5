"""Model backends: peers behind the decoder's :class:`~daemon.cpc.lm.TokenLM` protocol.

The decoder (:mod:`daemon.cpc`) asks a backend for batched next-token
log-probabilities and its vocabulary bytes; it never sees the runtime.

* ``llamacpp/``: llama.cpp in this process (llama-cpp-python): the model
  files (``models``), the ``TokenLM`` (``llama``, the only importer of
  ``llama_cpp``), its KV-cache slot plan (``slots``) and thread policy
  (``threads``).

* ``served/``: a served model (llama.cpp's server, vLLM).  A server returns
  a few log-probabilities per generated token, not whole rows, so it cannot
  implement ``TokenLM``: it is a ``Completer`` the worker calls in place of
  the decoder, with the engine's constrained decoding doing the covering.

:func:`daemon.runtime.make_decoder_factory` is the one place that chooses and
builds the backend.
"""
