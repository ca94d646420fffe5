"""Model runtime: finding model files (``models``) and running them
(``llama``, the only importer of llama_cpp; import it explicitly, it is heavy).

Only light names are re-exported here so that importing ``daemon.backends.llamacpp`` never
loads llama.cpp.
"""

from daemon.backends.llamacpp.models import ModelLoadError, available_models, resolve_model

__all__ = ["ModelLoadError", "available_models", "resolve_model"]
