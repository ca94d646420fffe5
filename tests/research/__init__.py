"""Research scripts (``python -m tests.research.<name>``), kept out of the shipped package; see README.md here."""
