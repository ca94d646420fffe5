"""ghosttype: system-wide local autocomplete (the daemon and its decoder)."""

__version__ = "0.1.0"
