"""mx.operator's Python custom operators: CustomOp, CustomOpProp, register and the Custom op.

Each op runs imperatively (with autograd), inside a hybridized HybridBlock (host
callbacks in one compiled program) and in a Symbol executor; all are checked against
NumPy and finite differences.
"""
from __future__ import annotations

import json
import pathlib
import warnings

import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, gluon
from mxjax.base import MXNetError
from mxjax.operator.custom import output_names

_CALLS: list = []  # what the props saw: (op_type, kwargs) per prop made
FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "custom"


class Sigmoid(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], 1 / (1 + mx.np.exp(-in_data[0])))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y = out_data[0]
        self.assign(in_grad[0], req[0], out_grad[0] * y * (1 - y))


@mx.operator.register("test_sigmoid")
class SigmoidProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return Sigmoid()


class ProdSum(mx.operator.CustomOp):
    """(scale * a * b, a + b); with an aux state, counts its training forwards in place."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, is_train, req, in_data, out_data, aux):
        a, b = in_data
        self.assign(out_data[0], req[0], self.scale * a * b)
        self.assign(out_data[1], req[1], a + b)
        if aux and is_train:
            self.assign(aux[0], "add", mx.np.ones(aux[0].shape, dtype=aux[0].dtype))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        a, b = in_data
        g0, g1 = out_grad
        self.assign(in_grad[0], req[0], g0 * b * self.scale + g1)
        self.assign(in_grad[1], req[1], g0 * a * self.scale + g1)


@mx.operator.register("test_prodsum")
class ProdSumProp(mx.operator.CustomOpProp):
    def __init__(self, scale="1.0", with_aux="False"):
        super().__init__(need_top_grad=True)
        _CALLS.append(("test_prodsum", {"scale": scale, "with_aux": with_aux}))
        self.scale, self.with_aux = float(scale), with_aux == "True"

    def list_arguments(self):
        return ["a", "b"]

    def list_outputs(self):
        return ["prod", "sum"]

    def list_auxiliary_states(self):
        return ["count"] if self.with_aux else []

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], in_shape[0]], [[1]] if self.with_aux else []

    def create_operator(self, ctx, shapes, dtypes):
        return ProdSum(self.scale)


def _np_sigmoid(x):
    return 1 / (1 + onp.exp(-x))


def _finite_difference(f, x, eps=1e-3):
    """Central differences of the scalar ``f`` at ``x`` (float64)."""
    grad = onp.zeros_like(x)
    for i in onp.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


X = onp.array([[0.5, -1.0, 2.0], [0.1, 0.0, -3.0]])
A = onp.array([[1.0, 2.0], [-0.5, 3.0]])
B = onp.array([[0.5, -1.0], [2.0, 0.25]])


# ----------------------------------------------------------------------------- imperative

def test_sigmoid_imperative_forward_and_backward():
    x = mx.nd.array(X, dtype="float64")
    y = mx.nd.Custom(x, op_type="test_sigmoid")
    assert isinstance(y, mx.nd.NDArray) and y.dtype == onp.float64
    onp.testing.assert_allclose(y.asnumpy(), _np_sigmoid(X), rtol=1e-12)
    x.attach_grad()
    with autograd.record():
        y = mx.nd.Custom(x, op_type="test_sigmoid")
        loss = (y * y).sum()
    loss.backward()
    expected = _finite_difference(lambda v: (_np_sigmoid(v) ** 2).sum(), X)
    onp.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-5)


def test_two_inputs_two_outputs_with_aux_updated_in_place():
    a, b = mx.nd.array(A, dtype="float64"), mx.nd.array(B, dtype="float64")
    count = mx.nd.zeros((1,), dtype="float64")
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        prod, total = mx.nd.Custom(a, b, count, op_type="test_prodsum", scale=2.5, with_aux=True)
        loss = (prod * total).sum()
    loss.backward()
    onp.testing.assert_allclose(prod.asnumpy(), 2.5 * A * B)
    onp.testing.assert_allclose(total.asnumpy(), A + B)
    assert count.asnumpy().tolist() == [1.0]  # the caller's array, updated by forward
    f = lambda u, v: (2.5 * u * v * (u + v)).sum()  # noqa: E731
    onp.testing.assert_allclose(a.grad.asnumpy(), _finite_difference(lambda u: f(u, B), A), rtol=1e-6)
    onp.testing.assert_allclose(b.grad.asnumpy(), _finite_difference(lambda v: f(A, v), B), rtol=1e-6)
    with autograd.predict_mode():  # not training: the op leaves its counter alone
        mx.nd.Custom(a, b, count, op_type="test_prodsum", scale=2.5, with_aux=True)
    assert count.asnumpy().tolist() == [1.0]


def test_kwargs_reach_the_prop_as_strings():
    _CALLS.clear()
    a, b = mx.nd.array(A), mx.nd.array(B)
    mx.nd.Custom(a, b, op_type="test_prodsum", scale=0.75)
    assert _CALLS == [("test_prodsum", {"scale": "0.75", "with_aux": "False"})]


def test_only_differentiable_inputs_get_write_requests():
    seen = []

    class Probe(ProdSum):
        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            seen.append(list(req))
            super().backward(req, out_grad, in_data, out_data, in_grad, aux)

    @mx.operator.register("test_probe")
    class ProbeProp(ProdSumProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Probe(self.scale)

    a, b = mx.nd.array(A), mx.nd.array(B)
    a.attach_grad()
    with autograd.record():
        prod, _ = mx.nd.Custom(a, b, op_type="test_probe")
    prod.backward()
    assert seen == [["write", "null"]]
    onp.testing.assert_allclose(a.grad.asnumpy(), B, rtol=1e-6)


# ----------------------------------------------------------------------------- hybridized

class SigmoidBlock(gluon.HybridBlock):
    def forward(self, x):
        return mx.nd.Custom(x, op_type="test_sigmoid") * 2


class ProdSumBlock(gluon.HybridBlock):
    def forward(self, a, b):
        prod, total = mx.nd.Custom(a, b, op_type="test_prodsum", scale="3")
        return prod - total


@pytest.mark.parametrize("hybridize", [False, True])
def test_block_matches_numpy_imperative_and_hybridized(hybridize):
    block = SigmoidBlock()
    if hybridize:
        block.hybridize()
    x = mx.np.array(X, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = block(x)
        loss = (y * y).sum()
    loss.backward()
    onp.testing.assert_allclose(y.asnumpy(), 2 * _np_sigmoid(X), rtol=1e-12)
    expected = _finite_difference(lambda v: ((2 * _np_sigmoid(v)) ** 2).sum(), X)
    onp.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-5)
    onp.testing.assert_allclose(block(x).asnumpy(), 2 * _np_sigmoid(X), rtol=1e-12)  # a second call
    if hybridize:
        (symbol_op,) = [n for n in json.loads(block._cache.programs()[0][1].symbol.tojson())["nodes"]
                        if n["op"] == "Custom"]
        assert symbol_op["attrs"]["op_type"] == "test_sigmoid"


def test_hybridized_two_outputs_gradients():
    block = ProdSumBlock()
    block.hybridize()
    a, b = mx.np.array(A, dtype="float64"), mx.np.array(B, dtype="float64")
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        out = block(a, b)
        loss = (out * out).sum()
    loss.backward()
    onp.testing.assert_allclose(out.asnumpy(), 3 * A * B - (A + B), rtol=1e-12)
    f = lambda u, v: ((3 * u * v - u - v) ** 2).sum()  # noqa: E731
    onp.testing.assert_allclose(a.grad.asnumpy(), _finite_difference(lambda u: f(u, B), A), rtol=1e-6)
    onp.testing.assert_allclose(b.grad.asnumpy(), _finite_difference(lambda v: f(A, v), B), rtol=1e-6)


# ----------------------------------------------------------------------------- symbol

def test_symbol_json_and_executor():
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    sym = mx.sym.Custom(a, b, op_type="test_prodsum", scale=2, name="ps")
    assert sym.list_arguments() == ["a", "b"] and sym.list_outputs() == ["ps_prod", "ps_sum"]  # as MXNet names them
    node = json.loads(sym.tojson())["nodes"][-1]
    assert node["op"] == "Custom" and node["attrs"] == {"op_type": "test_prodsum", "scale": "2"}
    loaded = mx.sym.load_json(sym.tojson())
    assert loaded.infer_shape(a=(2, 2), b=(2, 2))[1] == [(2, 2), (2, 2)]
    args = {"a": mx.nd.array(A, dtype="float64"), "b": mx.nd.array(B, dtype="float64")}
    grads = {"a": mx.nd.zeros((2, 2), dtype="float64"), "b": mx.nd.zeros((2, 2), dtype="float64")}
    exe = loaded.bind(mx.cpu(), args, args_grad=grads)
    prod, total = exe.forward(is_train=True)
    onp.testing.assert_allclose(prod.asnumpy(), 2 * A * B)
    onp.testing.assert_allclose(total.asnumpy(), A + B)
    exe.backward([mx.nd.ones((2, 2), dtype="float64"), mx.nd.ones((2, 2), dtype="float64")])
    onp.testing.assert_allclose(grads["a"].asnumpy(), 2 * B + 1)
    onp.testing.assert_allclose(grads["b"].asnumpy(), 2 * A + 1)


# the op of tools/make_custom_fixtures.py, whose numbers real MXNet 2.0 wrote
mx.operator.register("fixture_prodsum")(type("FixtureProdSumProp", (ProdSumProp,), {}))


def test_matches_mxnet_fixture_symbol_and_imperative():
    ref = json.loads((FIXTURES / "prodsum.json").read_text())
    with warnings.catch_warnings():  # (a note that the JSON comes from MXNet 2.0)
        warnings.simplefilter("ignore")
        sym = mx.sym.load_json((FIXTURES / "prodsum-symbol.json").read_text())  # hidden attrs and all
    assert sym.list_arguments() == ref["list_arguments"]
    names = output_names(sym._outputs[0][0].params)  # MXNet's output names are ps_<name>
    assert [f"ps_{n}" for n in names] == ref["list_outputs"]
    a, b = (mx.nd.array(ref[k], dtype="float64") for k in ("a", "b"))
    grads = {"a": mx.nd.zeros((2, 2), dtype="float64"), "b": mx.nd.zeros((2, 2), dtype="float64")}
    exe = sym.bind(mx.cpu(), {"a": a, "b": b}, args_grad=grads)
    prod, total = exe.forward(is_train=True)
    exe.backward([mx.nd.array(ref["head"], dtype="float64"), mx.nd.ones((2, 2), dtype="float64")])
    onp.testing.assert_allclose(prod.asnumpy(), ref["prod"])
    onp.testing.assert_allclose(total.asnumpy(), ref["sum"])
    onp.testing.assert_allclose(grads["a"].asnumpy(), ref["grad_a"])
    onp.testing.assert_allclose(grads["b"].asnumpy(), ref["grad_b"])

    count = mx.nd.zeros((1,), dtype="float64")
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        prod, total = mx.nd.Custom(a, b, count, op_type="fixture_prodsum", scale=ref["scale"], with_aux=True)
    heads = [mx.nd.array(ref["head"], dtype="float64"), mx.nd.ones((2, 2), dtype="float64")]
    autograd.backward([prod, total], heads)
    onp.testing.assert_allclose(a.grad.asnumpy(), ref["grad_a"])
    onp.testing.assert_allclose(b.grad.asnumpy(), ref["grad_b"])
    assert count.asnumpy().tolist() == ref["count_after"]


def test_forward_sees_the_training_flag_in_every_mode():
    seen = []

    class Probe(Sigmoid):
        def forward(self, is_train, req, in_data, out_data, aux):
            seen.append(bool(is_train))
            super().forward(is_train, req, in_data, out_data, aux)

    @mx.operator.register("test_train_probe")
    class ProbeProp(SigmoidProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Probe()

    class Block(gluon.HybridBlock):
        def forward(self, x):
            return mx.nd.Custom(x, op_type="test_train_probe")

    x = mx.np.array(X)
    mx.nd.Custom(x, op_type="test_train_probe")
    with autograd.train_mode():
        mx.nd.Custom(x, op_type="test_train_probe")
    block = Block()
    block.hybridize()
    block(x).asnumpy()
    with autograd.record():
        block(x).asnumpy()
    assert seen == [False, True, False, True]


# ----------------------------------------------------------------------------- errors

@mx.operator.register("test_bad_shapes")
class BadShapesProp(mx.operator.CustomOpProp):
    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], in_shape[0]], []  # two output shapes for one output

    def create_operator(self, ctx, shapes, dtypes):
        return Sigmoid()


class Boom(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        raise ValueError("kaboom")


@mx.operator.register("test_boom")
class BoomProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return Boom()


class BoomBlock(gluon.HybridBlock):
    def forward(self, x):
        return mx.nd.Custom(x, op_type="test_boom")


def test_infer_shape_with_wrong_count_names_the_op():
    with pytest.raises(MXNetError, match=r"'test_bad_shapes'.*2 output shapes; expected 1"):
        mx.nd.Custom(mx.nd.array(X), op_type="test_bad_shapes")
    with pytest.raises(MXNetError, match=r"'test_bad_shapes'"):
        mx.sym.Custom(mx.sym.Variable("x"), op_type="test_bad_shapes").infer_shape(x=(2, 3))


def test_exception_in_forward_is_an_mxnet_error_naming_the_op():
    message = r"Custom operator 'test_boom': forward raised ValueError: kaboom"
    with pytest.raises(MXNetError, match=message) as info:
        mx.nd.Custom(mx.nd.array(X), op_type="test_boom")
    assert "Traceback" not in str(info.value)
    block = BoomBlock()
    block.hybridize()
    with pytest.raises(MXNetError, match=r"'test_boom'.*kaboom"):
        block(mx.np.array(X)).asnumpy()
    exe = mx.sym.Custom(mx.sym.var("x"), op_type="test_boom").bind(mx.cpu(), {"x": mx.nd.array(X)})
    with pytest.raises(MXNetError, match=r"^forward: " + message) as info:  # the user's message, on one line
        exe.forward()
    assert "\n" not in str(info.value)


def test_unknown_op_type_and_wrong_input_count():
    with pytest.raises(MXNetError, match=r"cannot find custom operator 'no_such_op'"):
        mx.nd.Custom(mx.nd.array(X), op_type="no_such_op")
    with pytest.raises(MXNetError, match=r"'test_prodsum': expected 2 inputs"):
        mx.nd.Custom(mx.nd.array(A), op_type="test_prodsum")
    with pytest.raises(TypeError, match=r"reg_name must be the op's name"):
        mx.operator.register(SigmoidProp)


# ----------------------------------------------------------------------------- small pieces

def test_assign_honours_req():
    op = mx.operator.CustomOp()
    dst = mx.nd.array([1.0, 2.0])
    op.assign(dst, "null", mx.nd.array([5.0, 5.0]))
    assert dst.asnumpy().tolist() == [1.0, 2.0]
    op.assign(dst, "add", mx.nd.array([5.0, 5.0]))
    assert dst.asnumpy().tolist() == [6.0, 7.0]
    op.assign(dst, "write", mx.nd.array([0.5, 0.5]))
    assert dst.asnumpy().tolist() == [0.5, 0.5]


def test_prop_defaults():
    prop = mx.operator.CustomOpProp()
    assert prop.need_top_grad_ is True
    assert (prop.list_arguments(), prop.list_outputs(), prop.list_auxiliary_states()) == (["data"], ["output"], [])
    assert prop.infer_shape([[2, 3]]) == ([[2, 3]], ([2, 3],), ())
    assert prop.infer_type([onp.float32]) == ([onp.float32], [onp.float32], [])
    assert prop.declare_backward_dependency([1], [2], [3]) == [1, 2, 3]
    assert mx.operator.CustomOpProp(need_top_grad=False).declare_backward_dependency([1], [2], [3]) == [2, 3]


def test_registry_queries():
    names = mx.operator.get_all_registered_operators()
    assert "Custom" in names and "Activation" in names
    grouped = mx.operator.get_all_registered_operators_grouped()
    assert grouped["Custom"] == ["Custom"]
    assert all(name in names for aliases in grouped.values() for name in aliases)
    assert mx.operator.get_operator_arguments("Custom") == mx.operator.OperatorArguments(
        2, ["data", "op_type"], ["NDArray-or-Symbol[]", "string"])
    args = mx.operator.get_operator_arguments("Activation")
    assert args.names[0] == "data" and "act_type" in args.names and args.narg == len(args.names)
    with pytest.raises(MXNetError, match="not registered"):
        mx.operator.get_operator_arguments("no_such_op")
