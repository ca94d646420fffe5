"""The KV slot planner against a simulated unified KV cache (no model needed).

The simulator implements the llama.cpp semantics the backend relies on:
``seq_rm`` removes positions, ``seq_cp`` makes the destination share the
source's cells, decoding a token needs the sequence's previous position to be
present and takes one free cell.  After executing any plan, every slot must
hold exactly the sequence assigned to it, no cell budget may be exceeded, and
no cached prefix may be decoded again.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.backends.llamacpp.slots import CapacityError, KEEP_TAIL, SlotTable, schedule


class FakeKV:
    """Unified KV cache: seq id -> list of cell ids; a cell holds (pos, token)."""

    def __init__(self, n_seq: int, capacity: int) -> None:
        self.seqs: dict[int, list[int]] = {s: [] for s in range(n_seq)}
        self.cells: dict[int, tuple[int, int]] = {}
        self.capacity = capacity
        self._ids = itertools.count()

    def _gc(self) -> None:
        live = {c for cells in self.seqs.values() for c in cells}
        self.cells = {c: v for c, v in self.cells.items() if c in live}

    def seq_rm(self, seq: int, p0: int, p1: int) -> None:
        cells = self.seqs[seq]
        lo = max(p0, 0)
        hi = len(cells) if p1 < 0 else p1
        assert hi == len(cells), "the backend only trims tails"
        del cells[lo:]
        self._gc()

    def seq_cp(self, src: int, dst: int, p0: int, p1: int) -> None:
        assert self.seqs[dst] == [], "copy into a slot that was not cleared"
        self.seqs[dst] = list(self.seqs[src][p0:p1])

    def decode(self, entries) -> None:
        for e in entries:
            cells = self.seqs[e.slot]
            assert e.pos == len(cells), "positions must continue the sequence"
            assert len(self.cells) < self.capacity, "KV cache overflow"
            cid = next(self._ids)
            self.cells[cid] = (e.pos, e.token)
            cells.append(cid)

    def tokens(self, seq: int) -> list[int]:
        return [self.cells[c][1] for c in self.seqs[seq]]


def run(table: SlotTable, kv: FakeKV, seqs: list[tuple[int, ...]], chunk: int = 5) -> int:
    """Plan, execute, decode like the backend does; returns tokens decoded."""
    plan = table.plan(seqs)
    for c in plan.copies:
        kv.seq_rm(c.dst, -1, -1)
        if c.n:
            kv.seq_cp(c.src, c.dst, 0, c.n)
    for t in plan.trims:
        kv.seq_rm(t.slot, t.n, -1)
    for e in plan.evictions:
        kv.seq_rm(e, -1, -1)
    table.apply(plan)
    decoded = 0
    outputs = set()
    for entries in schedule(seqs, plan.assignments, chunk):
        assert len(entries) <= chunk
        kv.decode(entries)
        for e in entries:
            table.append(e.slot, e.token)
            if e.output is not None:
                outputs.add(e.output)
        decoded += len(entries)
    assert outputs == set(range(len(seqs))), "every sequence yields exactly one logits row"
    slots = [a.slot for a in plan.assignments]
    assert len(set(slots)) == len(slots)
    for q, a in enumerate(plan.assignments):
        assert tuple(kv.tokens(a.slot)) == seqs[q]
    for s in range(table.n_slots):  # bookkeeping mirrors the cache
        assert table.tokens(s) == tuple(kv.tokens(s))
    assert table.cells_in_use() == len(kv.cells) <= kv.capacity
    return decoded


def best_reuse(table: SlotTable, seq: tuple[int, ...]) -> int:
    """Oracle: the longest usable cached prefix of ``seq`` (the last token is
    always re-decoded because its logits are needed)."""
    best = 0
    for s in range(table.n_slots):
        cached = table.tokens(s)
        n = 0
        while n < min(len(cached), len(seq)) and cached[n] == seq[n]:
            n += 1
        best = max(best, n)
    return min(best, len(seq) - 1)


seq_st = st.lists(st.integers(0, 3), min_size=1, max_size=12).map(tuple)


@settings(max_examples=300, deadline=None)
@given(
    n_slots=st.integers(1, 4),
    requests=st.lists(st.lists(seq_st, min_size=1, max_size=4, unique=True), min_size=1, max_size=8),
)
def test_plans_are_executable_and_never_redecode_a_cached_prefix(n_slots, requests):
    capacity = 64  # large enough that nothing is evicted
    table, kv = SlotTable(n_slots, capacity), FakeKV(n_slots, capacity)
    for req in requests:
        req = req[:n_slots]
        expected = sum(len(s) - best_reuse(table, s) for s in req)
        decoded = run(table, kv, req)
        # Sequences that fork from the same slot may reuse it at most once in
        # place; copies keep the rest of the reuse, so nothing is lost.
        assert decoded == expected


@settings(max_examples=300, deadline=None)
@given(
    n_slots=st.integers(1, 4),
    capacity=st.integers(12, 30),
    requests=st.lists(st.lists(seq_st, min_size=1, max_size=3, unique=True), min_size=1, max_size=8),
)
def test_small_cache_evicts_instead_of_overflowing(n_slots, capacity, requests):
    table, kv = SlotTable(n_slots, capacity), FakeKV(n_slots, capacity)
    for req in requests:
        req = req[:n_slots]
        try:
            run(table, kv, req)
        except CapacityError:
            # Only allowed when the request alone cannot fit.
            assert sum(len(s) for s in req) > capacity


def test_beam_steps_fork_the_prefix_without_decoding_it_again():
    table, kv = SlotTable(4, 256), FakeKV(4, 256)
    prefix = tuple(range(10, 40))
    assert run(table, kv, [prefix]) == 30
    assert run(table, kv, [prefix + (1,), prefix + (2,)]) == 2
    assert run(table, kv, [prefix + (1, 5), prefix + (1, 6)]) == 2
    # the shared prefix is stored once
    assert table.cells_in_use() == 30 + 1 + 1 + 2


def test_long_tail_is_kept_in_its_slot_when_a_free_slot_exists():
    table, kv = SlotTable(2, 256), FakeKV(2, 256)
    field_a = tuple(range(100, 100 + KEEP_TAIL + 10))
    run(table, kv, [field_a])
    run(table, kv, [(100, 7, 8)])  # another text that shares one token
    # field A is still cached: asking for it again decodes only its last token
    assert run(table, kv, [field_a]) == 1


def test_schedule_is_fixed_and_chunked():
    seqs = [tuple(range(7)), (1, 2)]
    from daemon.backends.llamacpp.slots import Assignment

    batches = list(schedule(seqs, [Assignment(0, 2), Assignment(1, 0)], 3))
    assert [len(b) for b in batches] == [3, 3, 1]
    flat = [e for b in batches for e in b]
    assert [(e.slot, e.pos) for e in flat] == [(0, 2), (0, 3), (0, 4), (0, 5), (0, 6), (1, 0), (1, 1)]
    assert [e.output for e in flat] == [None, None, None, None, 0, None, 1]


def test_plan_rejects_more_sequences_than_slots():
    with pytest.raises(ValueError):
        SlotTable(2, 64).plan([(1,), (2,), (3,)])
