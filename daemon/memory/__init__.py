"""What ghosttype learns of the user's own words (``learn`` in the config).

* :mod:`~daemon.memory.store`: the memory itself, what the user typed in
  ordinary fields, bounded, oldest out first; shared by the threads.
* :mod:`~daemon.memory.learner`: what of a field's text goes in, and when
  (the controller's side: only text the model was already asked about).
* :mod:`~daemon.memory.cache_lm`: how it changes suggestions (a token cache
  mixed into the model's probabilities inside the coverage search).
* :mod:`~daemon.memory.history`: the rest of an earlier phrase the memory is
  sure of, shown where the decoder shows nothing (history completion).
* :mod:`~daemon.memory.persist` and :mod:`~daemon.memory.keystore`: ``learn = "persist"``, the memory kept
  across restarts in one encrypted file whose key the desktop's keyring holds.
* :mod:`~daemon.memory.forget`: ``ghosttype forget`` and the settings
  window's button, which a running ghosttype hears through a stamp file.

Nothing here logs text: counts only.
"""
