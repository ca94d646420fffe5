"""Benchmarks a user can run on their own text (``ghosttype eval``).

* :mod:`.offsets` picks cursor positions in a reference text (seeded).
* :mod:`.metrics` scores one suggestion against the true continuation.
* :mod:`.quality` runs several decoding strategies on the same cursors.
* :mod:`.replay` types a text one key at a time through the daemon's own
  request path and measures keystroke latency and model work.
* :mod:`.vocab_bench` times the vocabulary look-ups of the CPC decoder.
* :mod:`.report` renders the results as plain-text tables.

Nothing here writes typed or reference text to logs; the JSON files the user
asks for with ``--json`` do contain it, because that is their purpose.
"""
