"""Bookkeeping of a multi-sequence KV cache: which tokens each sequence slot
holds, how to reuse them for new requests, and in which batches to decode.

This is the pure half of the llama.cpp backend (no llama_cpp import), so the
planning rules can be tested exhaustively against a simulator.

Model of the cache (llama.cpp with a *unified* KV cache): a slot is a sequence
id; it holds a token list at positions ``0..n-1``.  Every position is backed
by a KV *cell*; ``seq_cp`` makes the destination share the source's cells (no
memory), decoding a token allocates a fresh cell, and a cell is freed when no
slot references it.  We track cell ids per slot, so "cells in use" is exact and
we can evict before llama.cpp would run out.

A request is a list of token sequences.  For each one we find the slot with
the longest common prefix (LCP) and either extend that slot in place (trimming
what diverges) or copy its first LCP positions into another slot.  Every plan
is executed in this order, which is what makes it safe:

1. copies, in planning order (a copy into slot ``d`` clears ``d`` first; a slot
   chosen as a destination is never read afterwards, and every copy *from* it
   was planned, hence executed, before it was chosen);
2. trims of slots reused in place (after all copies, which may read the
   trimmed tails);
3. evictions (whole slots cleared to make room);
4. decoding of every sequence's new tokens, in batches from :func:`schedule`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Sequence

#: Reusing a slot in place discards its tokens after the common prefix.  When
#: that tail is longer than this, and another slot is free or older, the
#: prefix is copied there instead, so e.g. the prompt of another text field
#: stays cached while the user is away.
KEEP_TAIL = 16


class CapacityError(Exception):
    """The requested sequences cannot all fit in the KV cache at once."""


@dataclass(frozen=True)
class Copy:
    src: int
    dst: int
    n: int  #: positions ``0..n-1`` are shared from src into (cleared) dst


@dataclass(frozen=True)
class Trim:
    slot: int
    n: int  #: positions ``>= n`` are removed


@dataclass(frozen=True)
class Assignment:
    """Where one requested sequence will be decoded."""

    slot: int
    start: int  #: tokens ``seq[start:]`` must be decoded (at positions start..)


@dataclass
class Plan:
    copies: list[Copy] = field(default_factory=list)
    trims: list[Trim] = field(default_factory=list)
    evictions: list[int] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)


@dataclass
class _Slot:
    tokens: list[int] = field(default_factory=list)
    cells: list[int] = field(default_factory=list)
    last_used: int = -1  #: tick of the last request that used it (-1: never)


def _lcp(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class SlotTable:
    """What each sequence slot holds, mirrored from the real KV cache.

    ``capacity`` is the number of KV cells (llama_n_ctx of the context).
    """

    def __init__(self, n_slots: int, capacity: int) -> None:
        if n_slots < 1:
            raise ValueError("need at least one sequence slot")
        self.n_slots = n_slots
        self.capacity = capacity
        self._slots = [_Slot() for _ in range(n_slots)]
        self._next_cell = 0
        self._tick = 0

    # ------------------------------------------------------------------ queries
    def tokens(self, slot: int) -> tuple[int, ...]:
        return tuple(self._slots[slot].tokens)

    def cached_prefix(self, seq: Sequence[int]) -> int:
        """The longest prefix of ``seq`` some slot holds."""
        return max((_lcp(s.tokens, seq) for s in self._slots), default=0)

    def cells_in_use(self) -> int:
        return len({c for s in self._slots for c in s.cells})

    # ------------------------------------------------------------------ planning
    def plan(self, seqs: Sequence[Sequence[int]]) -> Plan:
        """Plan cache operations so every sequence in ``seqs`` (distinct,
        non-empty, at most ``n_slots`` of them) can be decoded in its own slot,
        reusing the longest cached prefixes.  Pure: nothing is changed until
        :meth:`apply` is called.  Raises :class:`CapacityError` when the
        sequences cannot fit in the cache even after evicting every other slot.
        """
        if len(seqs) > self.n_slots:
            raise ValueError(f"{len(seqs)} sequences but only {self.n_slots} slots")
        if any(len(s) == 0 for s in seqs):
            raise ValueError("cannot decode an empty sequence")
        # Best source for each sequence: longest prefix, then most recently
        # used, then lowest slot id (a fixed order keeps plans deterministic).
        best: list[tuple[int, int]] = []  # (slot, usable lcp)
        for seq in seqs:
            cand = [
                (min(_lcp(s.tokens, seq), len(seq) - 1), s.last_used, -i)
                for i, s in enumerate(self._slots)
            ]
            lcp, _, neg = max(cand)
            best.append((-neg, lcp))
        order = sorted(range(len(seqs)), key=lambda q: (-best[q][1], q))
        wanted = {slot for slot, lcp in best if lcp > 0}

        in_place: dict[int, int] = {}  # slot -> trim length
        copy_dst: set[int] = set()
        sources: set[int] = set()  # unclaimed slots read by a planned copy
        assignments: dict[int, Assignment] = {}
        plan = Plan()
        for q in order:
            src, lcp = best[q]
            # A slot chosen as a copy destination no longer has its old content.
            if src in copy_dst:
                src, lcp = self._best_readable(seqs[q], copy_dst)
            claimed = in_place.keys() | copy_dst
            free = [
                i for i in range(self.n_slots) if i not in claimed and i not in sources and i != src
            ]
            # Keep the best sources of the other sequences intact if we can.
            dst = self._pick_destination([i for i in free if i not in wanted])
            if dst is None and src in claimed:
                dst = self._pick_destination(free)
            tail = len(self._slots[src].tokens) - lcp
            use_in_place = src not in claimed and (
                dst is None
                or tail <= KEEP_TAIL
                or (self._slots[dst].tokens and self._slots[dst].last_used >= self._slots[src].last_used)
            )
            if use_in_place:
                in_place[src] = lcp
                assignments[q] = Assignment(src, lcp)
                continue
            if dst is None:
                # Only slots read by earlier copies are left; those copies run
                # first, so overwriting one is still safe.
                rest = [i for i in range(self.n_slots) if i not in claimed and i != src]
                dst = self._pick_destination(rest)
                if dst is None:  # pragma: no cover - impossible with len(seqs) <= n_slots
                    raise AssertionError("no slot left for a sequence")
            copy_dst.add(dst)
            plan.copies.append(Copy(src, dst, lcp))
            if lcp > 0 and src not in in_place:
                sources.add(src)
            assignments[q] = Assignment(dst, lcp)

        plan.trims = [Trim(s, n) for s, n in sorted(in_place.items()) if n < len(self._slots[s].tokens)]
        plan.assignments = [assignments[q] for q in range(len(seqs))]
        plan.evictions = self._evictions(seqs, plan, claimed=in_place.keys() | copy_dst)
        return plan

    def _best_readable(self, seq: Sequence[int], excluded: set[int]) -> tuple[int, int]:
        cand = [
            (min(_lcp(s.tokens, seq), len(seq) - 1), s.last_used, -i)
            for i, s in enumerate(self._slots)
            if i not in excluded
        ]
        if not cand:
            return 0, 0
        lcp, _, neg = max(cand)
        return -neg, lcp

    def _pick_destination(self, free: list[int]) -> int | None:
        """Prefer an empty slot, then the least recently used one."""
        if not free:
            return None
        return min(free, key=lambda i: (bool(self._slots[i].tokens), self._slots[i].last_used, i))

    def _evictions(self, seqs: Sequence[Sequence[int]], plan: Plan, claimed: set[int]) -> list[int]:
        """Slots to clear so the decode fits in ``capacity`` cells."""
        after = self._simulate_structure(plan)
        new_cells = sum(len(seqs[q]) - a.start for q, a in enumerate(plan.assignments))
        evictable = sorted(
            (i for i in range(self.n_slots) if i not in claimed and after[i]),
            key=lambda i: (self._slots[i].last_used, i),
        )
        evicted: list[int] = []

        def used() -> int:
            return len({c for i, cells in enumerate(after) if i not in evicted for c in cells})

        while used() + new_cells > self.capacity:
            if not evictable:
                raise CapacityError(
                    f"{len(seqs)} sequences need {used() + new_cells} KV cells, "
                    f"the cache has {self.capacity}"
                )
            evicted.append(evictable.pop(0))
        return evicted

    def _simulate_structure(self, plan: Plan) -> list[list[int]]:
        cells = [list(s.cells) for s in self._slots]
        for c in plan.copies:
            cells[c.dst] = list(cells[c.src][: c.n])
        for t in plan.trims:
            cells[t.slot] = cells[t.slot][: t.n]
        return cells

    # ------------------------------------------------------------------ mutation
    def apply(self, plan: Plan) -> None:
        """Record that copies, trims and evictions of ``plan`` were executed."""
        self._tick += 1
        for c in plan.copies:
            src = self._slots[c.src]
            self._slots[c.dst] = _Slot(list(src.tokens[: c.n]), list(src.cells[: c.n]), self._tick)
        for t in plan.trims:
            s = self._slots[t.slot]
            del s.tokens[t.n :]
            del s.cells[t.n :]
        for e in plan.evictions:
            self._slots[e] = _Slot()
        for a in plan.assignments:
            self._slots[a.slot].last_used = self._tick

    def append(self, slot: int, token: int) -> None:
        """Record that ``token`` was decoded at the end of ``slot``."""
        s = self._slots[slot]
        s.tokens.append(token)
        s.cells.append(self._next_cell)
        self._next_cell += 1

    def clear(self) -> None:
        """Forget everything (after the real cache was cleared)."""
        self._slots = [_Slot() for _ in range(self.n_slots)]


@dataclass(frozen=True)
class BatchEntry:
    slot: int
    pos: int
    token: int
    output: int | None  #: index of the requested sequence whose logits this gives


def schedule(
    seqs: Sequence[Sequence[int]], assignments: Sequence[Assignment], chunk: int
) -> Iterator[list[BatchEntry]]:
    """Split the new tokens of all sequences into decode batches of at most
    ``chunk`` tokens.  Sequences are laid out one after another in request
    order, so a step of single-token beams is one batch and a long prefill is
    cut into equal chunks (a fixed policy: the same request on the same cache
    always gives the same batches, hence the same floating-point results).
    Only each sequence's last token asks for logits."""
    if chunk < 1:
        raise ValueError("chunk must be >= 1")
    batch: list[BatchEntry] = []
    for q, (seq, a) in enumerate(zip(seqs, assignments)):
        last = len(seq) - 1
        for pos in range(a.start, len(seq)):
            batch.append(BatchEntry(a.slot, pos, seq[pos], q if pos == last else None))
            if len(batch) == chunk:
                yield batch
                batch = []
    if batch:
        yield batch
