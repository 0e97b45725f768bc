"""``Block.summary``: MXNet's table of each block's output shapes and parameter counts."""
from __future__ import annotations

from typing import Any

import numpy as onp

from .. import autograd
from .._ndarray import NDArray

__all__ = ["print_summary"]


def _hybrid_blocks(block: Any) -> list:
    found = [block] if hasattr(block, "_active") else []
    for child in block._children.values():
        found.extend(_hybrid_blocks(child))
    return found


def _shapes(value: Any) -> str:
    """MXNet's text for the shapes of (nested lists of) arrays: ``(2, 4), [(2, 3), (1,)]``."""
    def shapes(v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            return [shapes(x) for x in v]
        return tuple(v.shape) if isinstance(v, NDArray) else v
    found = shapes(value)
    return str(found)[1:-1] if isinstance(found, list) else str(found)


def print_summary(root: Any, inputs: tuple) -> None:
    """Run ``root`` on ``inputs`` imperatively with a forward hook on every block, and print the table."""
    rows: list[tuple[str, str, int]] = []
    handles = []
    seen: set[int] = set()

    def visit(block: Any, name: str) -> None:
        def hook(blk: Any, args: Any, out: Any) -> None:
            count = 0
            for p in blk._reg_params.values():
                if id(p) not in seen and p.shape is not None:
                    seen.add(id(p))
                    count += int(onp.prod(p.shape))
            rows.append((f"{name}({type(blk).__name__})", _shapes(out), count))
        handles.append(block.register_forward_hook(hook))
        for child_name, child in block._children.items():
            visit(child, f"{name}.{child_name}" if name else child_name)

    visit(root, type(root).__name__.lower())
    flags = [(b, b._active) for b in _hybrid_blocks(root)]
    try:
        for block, _ in flags:  # imperatively, so every child's hook fires
            object.__setattr__(block, "_active", False)
        with autograd.pause():
            root(*inputs)
    finally:
        for block, active in flags:
            object.__setattr__(block, "_active", active)
        for handle in handles:
            handle.detach()
    width = max(len(r[0]) for r in rows) + 2
    line = "-" * (width + 45)
    print(line)
    print(f"{'Layer (type)':<{width}}{'Output Shape':<30}{'Param #':>15}")
    print("=" * (width + 45))
    print(f"{'Input':<{width}}{_shapes(inputs):<30}{0:>15}")
    for name, shape, count in rows:
        print(f"{name:<{width}}{shape:<30}{count:>15}")
    total = sum(r[2] for r in rows)
    trainable = sum(int(onp.prod(p.shape)) for p in root.collect_params().values()
                    if p.grad_req != "null" and p.shape is not None)
    print("=" * (width + 45))
    print(f"Parameters in forward computation graph, duplicate included\n   Total params: {total}\n"
          f"   Trainable params: {trainable}\n   Non-trainable params: {total - trainable}")
    print(line)
