"""Accessibility on Linux (AT-SPI over D-Bus, with jeepney): the focused
field, its text before the caret, its caret box, password detection.
``reader`` is the front door."""
