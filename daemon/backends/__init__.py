"""Model backends: peers behind the decoder's :class:`~daemon.cpc.lm.TokenLM` protocol.

The decoder (:mod:`daemon.cpc`) asks a backend for batched next-token
log-probabilities and its vocabulary bytes; it never sees the runtime.

* ``llamacpp/``: llama.cpp in this process (llama-cpp-python): the model
  files (``models``), the ``TokenLM`` (``llama``, the only importer of
  ``llama_cpp``), its KV-cache slot plan (``slots``) and thread policy
  (``threads``).

A second backend (a served model, for example) is a package beside
``llamacpp/`` implementing ``TokenLM``; :func:`daemon.runtime.make_decoder_factory`
is the one place that chooses and builds the backend.
"""
