"""Running a bulk segment (``graph.bulk``): op by op, or as one program from the compile cache.

A segment's structure -- each op with its fixed parameters, which leaf array or earlier
output feeds each input, the Python scalars it was given, and which outputs an array still
holds (by weak reference) -- is its key.  The first time a structure is seen its ops run one
by one, each with its own compiled function, as without bulk execution; once it has been
seen ``MXNET_EXEC_BULK_EXEC_COMPILE_AFTER`` times (default 2) it runs as one ``jax.jit``
program kept in the process-wide compile cache.  Code that runs once so compiles nothing
new, and a loop body compiles once.  Outputs nobody holds are not computed at all.

A segment is handed over as what it recorded: ``nodes`` (``graph.recorded``'s straight-line
graph), its ``leaves`` and its ``handles`` (the ``Pending`` values, which receive a value, or
the error of the op that failed and of every op after it).  Autograd's deferred nodes read before
``backward`` run here too, each step a node's forward returning its VJP (``_tape.nodes.run_with_vjps``).
"""
from __future__ import annotations

from typing import Callable

from .. import _config
from .._onednn import packing
from ..base import MXNetError
from . import compile_cache
from ._bulk_policy import Sightings
from .recorded import compiled, evaluate

__all__ = ["execute", "replay"]

_swap_x64, _restore_x64 = _config.swap_x64, _config.restore_x64

_PROGRAMS = compile_cache.Programs("bulk")
_SEEN = Sightings()


def execute(nodes: list, leaves: list, handles: list, wanted: tuple, op_error: Callable[..., Exception]) -> None:
    """Run a segment's ops as one program from the compile cache, once its structure (the ops, how
    they are wired, which outputs are ``wanted``) was seen often enough; op by op before that, or
    when the program fails (the op that fails is then named)."""
    key = (tuple([(fn, args) for _, fn, _, args, _ in nodes]), wanted)
    found = compile_cache.lookup(_PROGRAMS, key)
    if found is None:
        if _SEEN.op_by_op(key):
            replay(nodes, leaves, handles, op_error)
            return
        found = (compiled(nodes, wanted), [0])
    program, known = found
    previous = _swap_x64(True)
    try:
        args = leaves
        if type(program) is packing.PackedProgram:  # convolutions on weights packed for oneDNN
            program, args = program.prepare(tuple(leaves), None)
        values = program(*args)
        count = program._cache_size()
        if count != known[0]:  # compiled for a new signature: count it in the compile cache
            nbytes = compile_cache.executable_bytes(program, *args)
            if known[0] == 0:
                compile_cache.store(_PROGRAMS, key, found, nbytes, count)
            else:
                compile_cache.grow(_PROGRAMS, key, nbytes, count - known[0])
            known[0] = count
    except Exception:  # run op by op: the op that fails is named, with its inputs
        _restore_x64(previous)
        replay(nodes, leaves, handles, op_error)
        return
    _restore_x64(previous)
    for index, value in zip(wanted, values):
        handles[index].value = value


def replay(nodes: list, leaves: list, handles: list, op_error: Callable[..., Exception]) -> None:
    """Run the ops one by one with their own compiled functions (a structure's first sighting)."""
    values: list = []

    def failed(k: int, ins: list, err: Exception) -> Exception:
        op, _, params, _, _ = nodes[k]
        error = err if isinstance(err, MXNetError) else op_error(op, ins, params, err)
        _settle(handles, values)
        for handle in handles[len(values):]:  # this op's outputs and every later one
            handle.error = error
        return error
    previous = _swap_x64(True)
    try:
        evaluate(nodes, leaves, values, failed=failed)
    finally:
        _restore_x64(previous)
    _settle(handles, values)


def _settle(handles: list, values: list) -> None:
    for handle, value in zip(handles, values):
        handle.value = value


def _drop_programs() -> None:
    compile_cache.drop(_PROGRAMS)
    _SEEN.clear()


_config.on_drop_compiled(_drop_programs)
