"""Write tests/fixtures/symbol_api/graphs.json: the symbol JSON nodes MXNet 2.0 writes for small graphs.

Run with the reference MXNet 2.0 Python (``python tools/make_symbol_fixtures.py``).  Each case is
Python source run with ``mx`` bound to the library, ``a``/``b``/``c`` variables of legacy
semantics and ``na``/``nb``/``nc`` of NumPy semantics; it leaves its graph in ``out``.  The file
keeps the source next to the nodes (op, name, attributes) and the class of ``out`` (``Symbol``, or
``_Symbol`` for NumPy semantics), so the test runs the same source through mxjax and compares.
Each case runs in a fresh name manager.
"""
from __future__ import annotations

import json
import pathlib

import mxnet as mx

CASES = {
    # mx.sym.random: numbers -> _random_<dist>, symbols -> _sample_<dist>
    "random_uniform": "out = mx.sym.random.uniform(0, 1, shape=(2, 3))",
    "random_uniform_symbols": "out = mx.sym.random.uniform(a, b, shape=(2,))",
    "random_normal_dtype": "out = mx.sym.random.normal(0, 1, shape=(2, 3), dtype='float64')",
    "random_randn": "out = mx.sym.random.randn(2, 3, loc=1)",
    "random_randint": "out = mx.sym.random.randint(0, 5, shape=(2, 3))",
    "random_poisson": "out = mx.sym.random.poisson(2.0, shape=(2,))",
    "random_exponential": "out = mx.sym.random.exponential(2.0, shape=(2,))",
    "random_exponential_symbol": "out = mx.sym.random.exponential(a, shape=(2,))",
    "random_gamma": "out = mx.sym.random.gamma(2.0, 1.0, shape=(2,))",
    "random_negative_binomial": "out = mx.sym.random.negative_binomial(2, 0.5, shape=(2,))",
    "random_generalized_negative_binomial":
        "out = mx.sym.random.generalized_negative_binomial(2, 0.5, shape=(2,))",
    "random_binomial": "out = mx.sym.random.binomial(5, 0.5, shape=(2,))",
    "random_categorical": "out = mx.sym.random.categorical(a, shape=(2,))",
    "random_multinomial": "out = mx.sym.random.multinomial(a, b, shape=(2,))",
    "random_uniform_like": "out = mx.sym.random.uniform_like(a, low=1)",
    # mx.sym.npx names of legacy ops write the legacy op name; nodes are named after the npx name
    "npx_cast": "out = mx.sym.npx.cast(na, dtype='float16')",
    "npx_batch_flatten": "out = mx.sym.npx.batch_flatten(na)",
    "npx_add_n": "out = mx.sym.npx.add_n(na, nb)",
    "npx_norm": "out = mx.sym.npx.norm(na, ord=2, axis=1)",
    "npx_pad": "out = mx.sym.npx.pad(na, mode='constant', pad_width=(0, 0, 0, 0, 1, 1, 1, 1))",
    "npx_slice": "out = mx.sym.npx.slice(na, begin=(0,), end=(1,))",
    "npx_slice_like": "out = mx.sym.npx.slice_like(na, nb)",
    "npx_reshape_like": "out = mx.sym.npx.reshape_like(na, nb)",
    "npx_broadcast_greater": "out = mx.sym.npx.broadcast_greater(na, nb)",
    "npx_roi_pooling": "out = mx.sym.npx.roi_pooling(na, nb, pooled_size=(2, 2), spatial_scale=1.0)",
    "npx_scalar_poisson": "out = mx.sym.npx.scalar_poisson(lam=1.0, shape=(2,))",
    "npx_tensor_poisson": "out = mx.sym.npx.tensor_poisson(na, shape=(2,))",
    # variadic ops write their input count
    "add_n": "out = mx.sym.add_n(a, b, c)",
    "concat": "out = mx.sym.concat(a, b, dim=0)",
    "sparse_dot": "out = mx.sym.sparse.dot(a, b)",
    # a NumPy-semantics symbol's operators write NumPy ops, named after them (and stay NumPy symbols)
    "np_operator_add": "out = na + nb",
    "np_operator_multiply_scalar": "out = na * 2",
    "np_operator_subtract": "out = na - nb",
    "np_operator_true_divide": "out = na / nb",
    "np_operator_power_scalar": "out = na ** 2",
    "np_operator_negative": "out = -na",
    "np_operator_equal": "out = na == nb",
    "np_operator_greater_scalar": "out = na > 1",
    "np_as_nd_ndarray": "out = (na + nb).as_nd_ndarray() * 2.5",
    # mx.sym.np nodes are named after the op written, less its _npi_ prefix
    "np_add": "out = mx.sym.np.add(na, nb)",
    "np_multiply_scalar": "out = mx.sym.np.multiply(na, 2)",
    "np_exp": "out = mx.sym.np.exp(na)",
    "np_sqrt": "out = mx.sym.np.sqrt(mx.sym.np.abs(na))",
    # legacy nodes are named after the function called, an alias included
    "split": "out = mx.sym.split(a, num_outputs=2, axis=1)",
    "slice_channel": "out = mx.sym.SliceChannel(a, num_outputs=2)",
    "swapaxes": "out = mx.sym.swapaxes(a, dim1=0, dim2=1)",
    "swap_axis": "out = mx.sym.SwapAxis(a, dim1=0, dim2=1)",
    # attributes: AttrScope, hidden keys, variables made for missing inputs inherit the op's attributes
    "attr_scope": "\n".join([
        "with mx.AttrScope(ctx_group='stage1', __mood__='x'):",
        "    d = mx.sym.var('d', attr={'__mood__': 'y'}, lr_mult=2.0)",
        "    fc = mx.sym.FullyConnected(d, num_hidden=3, name='fc', attr={'__k__': 'v'})",
        "    with mx.AttrScope(wd_mult='0.5'):",
        "        out = mx.sym.Activation(fc, act_type='relu', name='act')",
    ]),
}


def nodes(symbol) -> list:
    """(op, name, attributes) of every node, without MXNet 2's __profiler_scope__ attribute."""
    graph = json.loads(symbol.tojson())
    return [[n["op"], n["name"], {k: v for k, v in n.get("attrs", {}).items() if "profiler_scope" not in k}]
            for n in graph["nodes"]]


def main() -> None:
    found = {}
    for name, source in CASES.items():
        with mx.name.NameManager():
            scope = {"mx": mx, **{v: mx.sym.var(v) for v in "abc"},
                     **{f"n{v}": mx.sym.var(v).as_np_ndarray() for v in "abc"}}
            exec(source, scope)  # noqa: S102  (our own case source)
            found[name] = {"code": source, "nodes": nodes(scope["out"]), "kind": type(scope["out"]).__name__}
    path = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "symbol_api" / "graphs.json"
    path.write_text(json.dumps({"mxnet": mx.__version__, "cases": found}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(found)} cases to {path}")


if __name__ == "__main__":
    main()
