"""Suite-wide settings.

Hypothesis: no per-example deadline.  None of the property tests is about
speed (speed is measured by the benchmarks, README "Benchmarks"), and on a
busy 2-core machine the default 200 ms deadline turns a slow example into a
failure that says nothing about the code.  A test that wants a deadline sets
one explicitly with ``@settings(deadline=...)``.
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("ghosttype", deadline=None)
settings.load_profile("ghosttype")
