"""Record MXNet 2.0's result dtypes for element-wise, scalar, in-place and reduction ops.

Run inside a reference MXNet virtualenv (``python tools/make_dtype_fixtures.py``); it writes
``tests/fixtures/dtypes/promotion.json``: for each case key, the result dtype name, or
``"error"`` where MXNet refuses the combination.  A few integer-division values are kept too.
Keys: ``<front>|<op>|<lhs>|<rhs>`` (``rhs`` is a dtype or a Python scalar tag ``py_int``,
``py_float`` or ``py_bool``; ``r<op>`` puts the scalar on the left; ``i<op>`` is the in-place
form) and ``<front>|<op>|<dtype>`` for unary ops.  ``np`` is ``mx.np`` under ``npx.set_np()``,
``nd`` the legacy ``mx.nd``.
"""
from __future__ import annotations

import json
import operator
import os
import sys

import mxnet as mx

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64"]
SCALARS = {"py_int": 2, "py_float": 2.5, "py_bool": True}
OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
             "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow,
             "eq": operator.eq, "lt": operator.lt, "ge": operator.ge}
INPLACE = {"iadd": operator.iadd, "isub": operator.isub, "imul": operator.imul,
           "itruediv": operator.itruediv, "ifloordiv": operator.ifloordiv}
NP_FUNCS = ["maximum", "minimum", "power", "true_divide", "logical_and", "logical_or", "equal", "less"]
ND_FUNCS = ["maximum", "minimum", "power", "broadcast_add", "broadcast_div", "broadcast_equal"]
NP_UNARY = ["mean", "sum", "prod", "argmax", "sqrt", "exp", "abs", "negative", "cumsum"]
ND_UNARY = ["mean", "sum", "prod", "argmax", "sqrt", "exp", "abs", "negative"]
VALUE_CASES = ["nd|truediv|int32|py_int", "nd|truediv|int32|int32", "nd|rtruediv|int32|py_int",
               "nd|mod|int32|py_int", "np|truediv|int32|py_int", "np|floordiv|int32|py_int",
               "np|mul|int32|py_float", "nd|mul|int32|py_float", "np|add|bool|bool", "nd|mean|int32", "np|mean|int32"]


def _array(front, dtype):
    values = [True, True] if dtype == "bool" else [3, 4]
    return front.array(values, dtype=dtype)


def _run(fn):
    """The result dtype name (and values), or "error" when MXNet raises (at the op or at the read)."""
    try:
        out = fn()
        values = out.asnumpy()
        return str(values.dtype), values.tolist()
    except Exception:  # any refusal, including MXNetError raised at the read
        return "error", None


def _record(front_name, front, binary_funcs, unary_funcs):
    table, values = {}, {}

    def put(key, fn):
        table[key], val = _run(fn)
        if key in VALUE_CASES:
            values[key] = val

    for lhs in DTYPES:
        for rhs in DTYPES:
            for name, fn in OPERATORS.items():
                put(f"{front_name}|{name}|{lhs}|{rhs}", lambda: fn(_array(front, lhs), _array(front, rhs)))
            for name, fn in INPLACE.items():
                def inplace(fn=fn):
                    a = _array(front, lhs)
                    a = fn(a, _array(front, rhs))
                    return a
                put(f"{front_name}|{name}|{lhs}|{rhs}", inplace)
            for name in binary_funcs:
                put(f"{front_name}|{name}|{lhs}|{rhs}",
                    lambda: getattr(front, name)(_array(front, lhs), _array(front, rhs)))
        for tag, scalar in SCALARS.items():
            for name, fn in OPERATORS.items():
                put(f"{front_name}|{name}|{lhs}|{tag}", lambda: fn(_array(front, lhs), scalar))
                put(f"{front_name}|r{name}|{lhs}|{tag}", lambda: fn(scalar, _array(front, lhs)))
            for name, fn in INPLACE.items():
                def inplace_scalar(fn=fn):
                    a = _array(front, lhs)
                    a = fn(a, scalar)
                    return a
                put(f"{front_name}|{name}|{lhs}|{tag}", inplace_scalar)
        for name in unary_funcs:
            put(f"{front_name}|{name}|{lhs}", lambda: getattr(front, name)(_array(front, lhs)))
    return table, values


def main() -> None:
    mx.npx.set_np()
    np_table, np_values = _record("np", mx.np, NP_FUNCS, NP_UNARY)
    mx.npx.reset_np()
    nd_table, nd_values = _record("nd", mx.nd, ND_FUNCS, ND_UNARY)
    out = {"mxnet_version": mx.__version__, "dtypes": {**np_table, **nd_table}, "values": {**np_values, **nd_values}}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "tests", "fixtures", "dtypes", "promotion.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print(f"wrote {len(out['dtypes'])} dtype cases to {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
