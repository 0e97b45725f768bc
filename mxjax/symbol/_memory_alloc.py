"""Block allocation of the memory planner over a simulated run (``_memory_sim``).

Walks the steps in order with reference counts: in-place reuse of a dying input,
best-fitting free blocks within the match range, and the ancestor bitsets that keep
blocks from passing between nodes that could run in parallel.  Kept apart from
``memory.py``, which builds the run and reports the plan.
"""
from __future__ import annotations

from ._memory_sim import Label, _Graph


class _Block:
    __slots__ = ("bid", "size", "live", "users")

    def __init__(self, bid: int, size: int) -> None:
        self.bid, self.size, self.live, self.users = bid, size, 0, 0


def _ancestors(graph: _Graph) -> list[int]:
    anc: list[int] = []
    for index, step in enumerate(graph.steps):
        bits = 0
        for p in [v.producer for v in step.inputs if v.producer is not None] + step.deps:
            bits |= anc[p] | (1 << p)
        anc.append(bits)
    return anc


def _best_fit(free: list[_Block], need: int, allowed: int, match_range: int) -> _Block | None:
    fits = [b for b in free if not b.users & ~allowed and need <= b.size <= need * match_range]
    if fits:
        return min(fits, key=lambda b: b.size)
    smaller = [b for b in free if not b.users & ~allowed and b.size < need and b.size * match_range >= need]
    return max(smaller, key=lambda b: b.size) if smaller else None


def _allocate(graph: _Graph, anc: list[int], match_range: int) -> tuple[list[_Block], dict[int, int], list]:
    refs = {id(v): len(v.consumers) + (1 if v.head else 0) for v in graph.values}
    blocks: list[_Block] = []
    where: dict[int, int] = {}   # id(value) -> block id
    free: list[_Block] = []
    inplace: list[tuple[str, Label]] = []
    for index, step in enumerate(graph.steps):
        me = 1 << index
        taken: set[int] = set()
        for j, v in enumerate(step.outputs):
            if v.external:
                continue
            block_id = None
            for k, jj in step.inplace:
                src = step.inputs[k]
                if jj != j or src.external or src.head or refs[id(src)] != 1 or where[id(src)] in taken:
                    continue
                block = blocks[where[id(src)]]
                if block.live == 1 and not block.users & ~(anc[index] | me):
                    block_id = where[id(src)]
                    inplace.append((step.name, src.label))
                    break
            if block_id is None:
                block = _best_fit(free, v.nbytes, anc[index], match_range)
                if block is None:
                    block = _Block(len(blocks), v.nbytes)
                    blocks.append(block)
                else:
                    free.remove(block)
                    block.size = max(block.size, v.nbytes)
                block_id = block.bid
            where[id(v)] = block_id
            taken.add(block_id)
            blocks[block_id].live += 1
            blocks[block_id].users |= me
        seen: set[int] = set()
        for v in step.inputs:
            if v.external or id(v) in seen:
                continue
            seen.add(id(v))
            block = blocks[where[id(v)]]
            block.users |= me
            refs[id(v)] -= 1
            if refs[id(v)] == 0:
                _release(block, free)
        for v in step.outputs:
            if not v.external and refs[id(v)] == 0:  # an output nothing reads dies at once
                _release(blocks[where[id(v)]], free)
    return blocks, where, inplace


def _release(block: _Block, free: list[_Block]) -> None:
    block.live -= 1
    if block.live == 0:
        free.append(block)
