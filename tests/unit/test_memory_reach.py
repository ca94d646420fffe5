"""tests/research/memory_reach.py: the characters of a span that continue a phrase of the memory, against a
scan of every length."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.research.memory_reach import reach


def scan(span: str, before: str, memory: str, context: int, least: int) -> int:
    text, covered, i = before + span, 0, 0
    while i < len(span):
        if i == 0 or span[i - 1].isspace():
            ctx = text[max(0, len(before) + i - context):len(before) + i]
            longest = max((n for n in range(len(span) - i + 1) if ctx + span[i:i + n] in memory), default=0)
            if longest >= least:
                covered, i = covered + longest, i + longest
                continue
        i += 1
    return covered


def test_a_phrase_of_the_memory_after_the_same_context_is_reached_and_one_after_another_is_not():
    memory = "we type the cursor keys here. then the cursor moves."
    assert reach("cursor keys now", "move the ", memory, context=4, least=5) == len("cursor keys ")
    # "e a " never came before "cursor", but "sor " came before "keys "
    assert reach("cursor keys now", "move a ", memory, context=4, least=5) == len("keys ")
    assert reach("cursor keys now", "move the ", memory, context=4, least=20) == 0  # too short to count


@settings(max_examples=200, deadline=None)
@given(span=st.text(alphabet="ab ", max_size=20), before=st.text(alphabet="ab ", max_size=8),
       memory=st.text(alphabet="ab ", max_size=40), context=st.integers(0, 5), least=st.integers(1, 4))
def test_reach_is_the_scan_of_every_length(span, before, memory, context, least):
    assert reach(span, before, memory, context, least) == scan(span, before, memory, context, least)
