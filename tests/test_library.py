"""mx.library: an MXNet 2.0 extension library (tests/fixtures/library) loaded into mxjax.

The library is built from mxjax_test_ops.cc against MXNet 2.0's lib_api by
tools/make_library_fixture.py, which also ran its ops in real MXNet 2.0 (reference.npz).
Oracles: NumPy, finite differences, those MXNet numbers, and a Python std::mt19937.
"""
from __future__ import annotations

import json
import os
import platform
import re
import sys
from pathlib import Path

import numpy as onp
import pytest

import mxjax as mx
import mxjax.library as library
from mxjax import autograd, gluon
from mxjax._library_abi import reseed_cpu_states
from mxjax.base import MXNetError

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and platform.machine() == "x86_64"),
                                reason="the fixture libraries are built for Linux x86-64")

FIXTURES = (Path(__file__).parent / "fixtures" / "library").resolve()
LIB = str(FIXTURES / "libmxjax_test_ops.so")


@pytest.fixture(scope="module")
def ref():
    mx.sym.contrib.box_iou  # (contrib's name table exists before the load adds contrib.fx_double)
    library.load(LIB, verbose=False)
    with onp.load(FIXTURES / "reference.npz") as data:
        return {k: data[k] for k in data.files}


def _finite_difference(f, x, eps=1e-6):
    grad = onp.zeros_like(x)
    for i in onp.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


# ----------------------------------------------------------------------------- loading

def test_bad_paths_are_mxnet_errors_naming_the_path(tmp_path):
    missing = str(tmp_path / "nope.so")
    with pytest.raises(MXNetError, match=re.escape(f"load path {missing} does NOT exist")):
        library.load(missing)
    with pytest.raises(MXNetError, match="path must be a str"):
        library.load(42)
    relative = os.path.relpath(LIB)
    with pytest.raises(MXNetError, match="is not an absolute path"):
        library.load(relative)
    text = tmp_path / "notes.txt"
    text.write_text("x")
    with pytest.raises(MXNetError, match="is NOT a library file"):
        library.load(str(text))
    fake = tmp_path / "fake.so"
    fake.write_bytes(b"not an ELF file")
    with pytest.raises(MXNetError, match="cannot open"):
        library.load(str(fake))


def test_incompatible_lib_api_version_names_both_versions():
    with pytest.raises(MXNetError, match=r"lib_api version 7.*version 11"):
        library.load(str(FIXTURES / "libold_version.so"), verbose=False)


def test_where_the_ops_appear(ref):
    for name in ("fx_matmul", "fx_posneg", "fx_scale_cols", "fx_accumulate", "fx_uniform"):
        assert getattr(mx.nd, name) is getattr(mx.nd.op, name)
        assert callable(getattr(mx.sym, name)) and callable(getattr(mx.sym.op, name))
        assert not hasattr(mx.np, name) and not hasattr(mx.npx, name)  # as in MXNet 2.0
    assert not hasattr(mx.nd, "_fx_subgraph_op")  # subgraph ops belong to partitioners
    assert not hasattr(mx.nd, "_contrib_fx_double") and callable(mx.sym.contrib.fx_double)
    x = ref["x"].astype("float32")
    onp.testing.assert_array_equal(mx.nd.contrib.fx_double(mx.nd.array(x)).asnumpy(), ref["contrib_double"])
    onp.testing.assert_array_equal(ref["contrib_double"], 2 * x)
    entry = library.loaded_libs[-1]
    assert entry.path == LIB and isinstance(entry.handle, int)
    assert library.compiled_with_gcc_cxx11_abi() == 0  # what MXNet 2.0's wheel returns


def test_verbose_load_lists_the_ops_and_loading_twice_keeps_them(ref, capsys):
    count = len(library.loaded_libs)
    library.load(Path(LIB))  # a path object works too
    err = capsys.readouterr().err
    assert "6 operator(s)" in err and "op[0] fx_matmul" in err and "op[5] _contrib_fx_double" in err
    assert "1 partitioner(s), 1 graph pass(es)" in err
    assert len(library.loaded_libs) == count + 1
    onp.testing.assert_allclose(mx.nd.fx_matmul(mx.nd.ones((1, 2)), mx.nd.ones((2, 1))).asnumpy(), [[2.0]])


# ----------------------------------------------------------------------------- stateless ops

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_forward_and_backward_match_mxnet(ref, dtype):
    a, b = mx.nd.array(ref["a"], dtype=dtype), mx.nd.array(ref["b"], dtype=dtype)
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        c = mx.nd.fx_matmul(a, b, alpha=2.5)
    c.backward(mx.nd.array(ref["head"], dtype=dtype))
    assert type(c) is mx.nd.NDArray and c.dtype == onp.dtype(dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    onp.testing.assert_allclose(c.asnumpy(), ref[f"matmul_{dtype}"], rtol=tol)
    onp.testing.assert_allclose(c.asnumpy(), 2.5 * ref["a"] @ ref["b"], rtol=tol, atol=tol)
    onp.testing.assert_allclose(a.grad.asnumpy(), ref[f"matmul_da_{dtype}"], rtol=tol, atol=tol)
    onp.testing.assert_allclose(b.grad.asnumpy(), ref[f"matmul_db_{dtype}"], rtol=tol, atol=tol)


def test_matmul_gradient_matches_finite_differences(ref):
    a, b, head = ref["a"], ref["b"], ref["head"]
    x = mx.nd.array(a, dtype="float64")
    x.attach_grad()
    with autograd.record():
        loss = (mx.nd.fx_matmul(x, mx.nd.array(b, dtype="float64")) * mx.nd.array(head, dtype="float64")).sum()
    loss.backward()
    expected = _finite_difference(lambda v: ((v @ b) * head).sum(), a)
    onp.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-6)


def test_two_outputs_are_a_list_and_without_backward_is_an_error(ref):
    x = mx.nd.array(ref["x"], dtype="float64")
    pos, neg = mx.nd.fx_posneg(x)
    onp.testing.assert_array_equal(pos.asnumpy(), ref["posneg_pos"])
    onp.testing.assert_array_equal(neg.asnumpy(), onp.maximum(-ref["x"], 0))
    assert isinstance(mx.nd.fx_posneg(x), list)
    x.attach_grad()
    with autograd.record():
        pos, _ = mx.nd.fx_posneg(x)
    with pytest.raises(MXNetError, match="'fx_posneg' is non-differentiable"):
        pos.backward()


def test_mutated_input_is_updated_in_place(ref):
    acc = mx.nd.array(ref["acc"])
    x = mx.nd.array(ref["x"], dtype="float32")
    first = mx.nd.fx_accumulate(x, acc).asnumpy()
    second = mx.nd.fx_accumulate(x, acc).asnumpy()
    onp.testing.assert_allclose(first, ref["accumulate_first"], rtol=1e-6)
    onp.testing.assert_allclose(second, ref["accumulate_second"], rtol=1e-6)
    onp.testing.assert_allclose(acc.asnumpy(), ref["acc"] + 2 * ref["x"].astype("float32"), rtol=1e-6)


def test_mutated_input_is_an_auxiliary_state_in_symbols(ref):
    sym = mx.sym.fx_accumulate(mx.sym.var("x"), mx.sym.var("acc"))
    assert sym.list_arguments() == ["x"] and sym.list_auxiliary_states() == ["acc"]  # as in MXNet 2.0
    acc = mx.nd.array(ref["acc"])
    x = ref["x"].astype("float32")
    exe = sym._bind(mx.cpu(), {"x": mx.nd.array(x)}, aux_states={"acc": acc})
    out = exe.forward(is_train=True)[0]
    onp.testing.assert_allclose(out.asnumpy(), ref["accumulate_first"], rtol=1e-6)
    onp.testing.assert_allclose(acc.asnumpy(), ref["acc"] + x, rtol=1e-6)  # written back after training


def test_out_argument_and_numpy_arrays(ref):
    out = mx.nd.zeros((3, 2), dtype="float64")
    result = mx.nd.fx_matmul(mx.nd.array(ref["a"], dtype="float64"), mx.nd.array(ref["b"], dtype="float64"),
                             out=out)
    assert result is out
    onp.testing.assert_allclose(out.asnumpy(), ref["a"] @ ref["b"], rtol=1e-12)
    # MXNet 2.0 refuses mx.np arrays here; mxjax runs the op and keeps the array class
    c = mx.nd.fx_matmul(mx.np.array(ref["a"]), mx.np.array(ref["b"]))
    assert isinstance(c, mx.np.ndarray)


# ----------------------------------------------------------------------------- stateful op

def test_stateful_forward_and_backward_match_mxnet(ref):
    x = mx.nd.array(ref["x"], dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = mx.nd.fx_scale_cols(x, scale=0.75)
    y.backward(mx.nd.ones_like(y))
    weights = 0.75 * onp.arange(1, 6)  # built by createOpState from the input's shape
    onp.testing.assert_allclose(y.asnumpy(), ref["x"] * weights, rtol=1e-12)
    onp.testing.assert_allclose(y.asnumpy(), ref["scale_cols"], rtol=1e-12)
    onp.testing.assert_allclose(x.grad.asnumpy(), ref["scale_cols_dx"], rtol=1e-12)


# ----------------------------------------------------------------------------- random states

def _mt19937_first(seed: int) -> int:
    """The first output of std::mt19937(seed), in plain Python."""
    mt = [seed & 0xFFFFFFFF]
    for i in range(1, 624):
        mt.append((1812433253 * (mt[-1] ^ (mt[-1] >> 30)) + i) & 0xFFFFFFFF)
    y = (mt[0] & 0x80000000) | (mt[1] & 0x7FFFFFFF)
    y = mt[397] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    return y ^ (y >> 18)


def test_cpu_random_states_are_seeded_mt19937(ref):
    assert _mt19937_first(7) == 327741615  # printed by a C++ std::mt19937(7)
    reseed_cpu_states(1234)
    got = mx.nd.fx_uniform(mx.nd.zeros((2, 3))).asnumpy()
    # element i draws from state i: std::uniform_real_distribution<float> of its first output
    expected = [onp.float32(_mt19937_first(1234 + i)) / onp.float32(2.0 ** 32) for i in range(6)]
    onp.testing.assert_array_equal(got.ravel(), onp.array(expected, dtype="float32"))
    assert not onp.array_equal(mx.nd.fx_uniform(mx.nd.zeros((2, 3))).asnumpy(), got)  # the states advanced


# ----------------------------------------------------------------------------- graphs

class MatmulScale(gluon.HybridBlock):
    def forward(self, a, b):
        return mx.nd.fx_scale_cols(mx.nd.fx_matmul(a, b, alpha=2), scale=0.5) * 3


@pytest.mark.parametrize("hybridize", [False, True])
def test_block_with_library_ops_imperative_and_hybridized(ref, hybridize):
    block = MatmulScale()
    if hybridize:
        block.hybridize()
    a_np, b_np = ref["a"], ref["b"]
    a, b = mx.np.array(a_np, dtype="float64"), mx.np.array(b_np, dtype="float64")
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = block(a, b)
        loss = (y * y).sum()
    loss.backward()
    w = 0.5 * onp.arange(1, 3)
    f = lambda u, v: ((3 * (2 * u @ v) * w) ** 2).sum()  # noqa: E731
    onp.testing.assert_allclose(y.asnumpy(), 3 * (2 * a_np @ b_np) * w, rtol=1e-12)
    onp.testing.assert_allclose(a.grad.asnumpy(), _finite_difference(lambda u: f(u, b_np), a_np), rtol=1e-5)
    onp.testing.assert_allclose(b.grad.asnumpy(), _finite_difference(lambda v: f(a_np, v), b_np), rtol=1e-5)
    onp.testing.assert_allclose(block(a, b).asnumpy(), y.asnumpy(), rtol=1e-12)  # a second call
    if hybridize:
        nodes = json.loads(block._cache.programs()[0][1].symbol.tojson())["nodes"]
        ops = [n for n in nodes if n["op"].startswith("fx_")]
        assert [(n["op"], n["attrs"]) for n in ops] == [("fx_matmul", {"alpha": "2"}),
                                                        ("fx_scale_cols", {"scale": "0.5"})]


class PosNegBlock(gluon.HybridBlock):
    def forward(self, x):
        pos, neg = mx.nd.fx_posneg(x)
        return pos - 2 * neg


def test_hybridized_op_without_backward(ref):
    block = PosNegBlock()
    block.hybridize()
    x = mx.np.array(ref["x"])
    onp.testing.assert_allclose(block(x).asnumpy(), onp.maximum(ref["x"], 0) - 2 * onp.maximum(-ref["x"], 0),
                                rtol=1e-6)
    x.attach_grad()
    with autograd.record():
        y = block(x)
    with pytest.raises(MXNetError, match="'fx_posneg' is non-differentiable"):
        y.backward()
        x.grad.asnumpy()  # (compiled backward programs report at the next sync point)


def test_symbol_written_by_mxnet_runs(ref):
    sym = mx.sym.load_json(str(ref["symbol_json"]))
    assert sym.list_arguments() == ["a", "b"] and sym.list_outputs() == ["mm_output"]
    assert sym.infer_shape(a=(3, 4), b=(4, 2))[1] == [(3, 2)]
    assert sym.infer_type(a="float64", b="float64")[1] == [onp.float64]
    args = {"a": mx.nd.array(ref["a"], dtype="float64"), "b": mx.nd.array(ref["b"], dtype="float64")}
    grads = {k: mx.nd.zeros(v.shape, dtype="float64") for k, v in args.items()}
    exe = sym._bind(mx.cpu(), args, args_grad=grads)
    out = exe.forward(is_train=True)[0]
    onp.testing.assert_allclose(out.asnumpy(), ref["symbol_out"], rtol=1e-12)
    exe.backward(mx.nd.array(ref["head"], dtype="float64"))
    onp.testing.assert_allclose(grads["a"].asnumpy(), 0.5 * ref["head"] @ ref["b"].T, rtol=1e-12)
    onp.testing.assert_allclose(grads["b"].asnumpy(), 0.5 * ref["a"].T @ ref["head"], rtol=1e-12)


def test_symbol_names_and_json(ref):
    sym = mx.sym.fx_posneg(mx.sym.var("x"), name="pn")
    assert sym.list_outputs() == ["pn_output0", "pn_output1"]  # as MXNet 2.0 names them
    node = json.loads(mx.sym.fx_matmul(mx.sym.var("a"), mx.sym.var("b"), alpha=2, name="mm").tojson())["nodes"][-1]
    assert node["op"] == "fx_matmul" and node["name"] == "mm" and node["attrs"] == {"alpha": "2"}


# ----------------------------------------------------------------------------- errors

def test_library_errors_carry_the_library_messages(ref):
    a, b = mx.nd.ones((2, 3)), mx.nd.ones((3, 2))
    with pytest.raises(MXNetError, match=r"(?s)'fx_matmul'.*parseAttrs.*alpha must be a number, got 'x'"):
        mx.nd.fx_matmul(a, b, alpha="x")
    with pytest.raises(MXNetError, match=r"(?s)inferShape.*inner dimensions differ \(3 vs 2\)") as info:
        mx.nd.fx_matmul(a, a)
    assert "alpha must be a number" not in str(info.value)  # only this call's messages (MXNet repeats old ones)
    with pytest.raises(MXNetError, match=r"(?s)inferType.*type codes 0 and 1"):
        mx.nd.fx_matmul(a, b.astype("float64"))
    with pytest.raises(MXNetError, match=r"(?s)'fx_scale_cols'.*needs a numeric 'scale'"):
        mx.nd.fx_scale_cols(a)
    with pytest.raises(MXNetError, match="Operator fx_matmul expects 2 inputs, but got 1 instead"):
        mx.nd.fx_matmul(a)
    with pytest.raises(MXNetError, match="inner dimensions differ"):
        mx.sym.fx_matmul(mx.sym.var("a"), mx.sym.var("b")).infer_shape(a=(2, 3), b=(2, 3))
    with pytest.raises(TypeError, match="input 1 must be an NDArray"):
        mx.nd.fx_matmul(a, [[1.0]])


def _visible(sym):
    """A symbol's nodes without hidden (``__x__``) attributes."""
    return [(n["op"], n["name"], {k: v for k, v in n.get("attrs", {}).items() if not k.startswith("__")},
             n["inputs"]) for n in json.loads(sym.tojson())["nodes"]]


def test_graph_pass_rewrites_the_symbol(ref):
    run = library._find_graph_pass("fx_set_alpha")
    assert library._find_graph_pass("no_such_pass") is None
    sym = mx.sym.fx_matmul(mx.sym.var("a"), mx.sym.var("b"), alpha=0.5, name="mm")
    expected = mx.sym.load_json(str(ref["pass_json"]))  # what MXNet 2.0's optimize_for wrote
    new = run(sym, alpha=3)
    assert json.loads(new.tojson())["nodes"][-1]["attrs"] == {"alpha": "3"}
    assert _visible(new) == _visible(expected)
    # with the values given, the pass swaps 'b' for a new array it fills with 2 * b
    b = mx.nd.array(onp.full((3, 2), 1.5), dtype="float32")
    args = {"a": mx.nd.ones((2, 3)), "b": b}
    new = run(sym, args, alpha="3", double_arg="b")
    assert args["b"] is not b and args["b"].dtype == onp.float32
    onp.testing.assert_array_equal(args["b"].asnumpy(), onp.full((3, 2), 3.0))  # (MXNet 2.0 returns garbage)
    onp.testing.assert_array_equal(b.asnumpy(), onp.full((3, 2), 1.5))
    out = new._bind(mx.cpu(), args).forward()[0]
    onp.testing.assert_allclose(out.asnumpy(), onp.full((2, 2), 27.0))


def test_graph_pass_errors_carry_the_library_messages(ref):
    run = library._find_graph_pass("fx_set_alpha")
    sym = mx.sym.fx_matmul(mx.sym.var("a"), mx.sym.var("b"))
    with pytest.raises(MXNetError, match=r"(?s)Error calling graph pass for 'fx_set_alpha'.*needs an 'alpha'"):
        run(sym)
    with pytest.raises(MXNetError, match=r"argument 'b' needs a float32 value"):
        run(sym, {"b": mx.nd.ones((3, 2), dtype="float64")}, alpha=1, double_arg="b")


@pytest.mark.parametrize("backend", ["fx_set_alpha", "fx_partitioner"])
def test_library_partitioners_and_passes_are_not_supported_yet(ref, backend):
    sym = mx.sym.fx_matmul(mx.sym.var("a"), mx.sym.var("b"))
    with pytest.raises(MXNetError, match=f"'{backend}' is a .* of the extension library.*(not supported|does not run)"):
        sym.optimize_for(backend)
