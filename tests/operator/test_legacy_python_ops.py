"""mx.operator's legacy Python operators (PythonOp, NumpyOp, NDArrayOp) and its mx.base re-exports.

Oracles: NumPy, finite differences, and tests/fixtures/misc_modules/legacy_numpy_op.json
(tools/make_misc_module_fixtures.py: a NumpyOp loss layer bound in real MXNet 2.0).
"""
import ctypes
import json
import pathlib
import warnings

import numpy as onp
import pytest

import mxjax as mx
from mxjax import base

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "misc_modules" / "legacy_numpy_op.json"
X = onp.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*has been deprecated. Please use CustomOp")
        yield


class Cube(mx.operator.NumpyOp):
    def __init__(self):
        super().__init__(need_top_grad=True)
        self.seen = []

    def forward(self, in_data, out_data):
        self.seen.append(type(in_data[0]))
        out_data[0][:] = in_data[0] ** 3

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 3 * in_data[0] ** 2 * out_grad[0]


class Loss(mx.operator.NumpyOp):  # the op of tools/make_misc_module_fixtures.py
    def __init__(self):
        super().__init__(False)
        self.out_grads = []

    def list_arguments(self):
        return ["data", "label"]

    def forward(self, in_data, out_data):
        out_data[0][:] = (in_data[0] - in_data[1]) ** 2

    def backward(self, out_grad, in_data, out_data, in_grad):
        self.out_grads.append(out_grad)
        in_grad[0][:] = 2 * (in_data[0] - in_data[1])
        in_grad[1][:] = -2 * (in_data[0] - in_data[1])


class SplitRows(mx.operator.NumpyOp):
    """Two outputs with their own shapes: 2 * x and the row sums."""

    def list_outputs(self):
        return ["double", "rowsum"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], [in_shape[0][0]]]

    def forward(self, in_data, out_data):
        out_data[0][:] = 2 * in_data[0]
        out_data[1][:] = in_data[0].sum(axis=1)

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 2 * out_grad[0] + out_grad[1][:, None]


class Scale(mx.operator.NDArrayOp):
    def __init__(self, need_top_grad=True):
        super().__init__(need_top_grad)
        self.types = []

    def forward(self, in_data, out_data):
        self.types.append((type(in_data[0]), type(out_data[0])))
        out_data[0][:] = in_data[0] * 3

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = out_grad[0] * 3

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0]]


def _bind(sym, **arrays):
    grads = {k: mx.nd.zeros(v.shape, dtype=v.dtype) for k, v in arrays.items()}
    exe = sym._bind(mx.cpu(), {k: mx.nd.array(v, dtype=v.dtype) for k, v in arrays.items()}, args_grad=grads)
    return exe, grads


def test_numpy_op_forward_backward_on_numpy_arrays():
    op = Cube()
    sym = op(mx.sym.Variable("x"), name="cube")
    assert sym.list_arguments() == ["x"] and sym.list_outputs() == ["cube_output"]
    exe, grads = _bind(sym, x=X)
    (out,) = exe.forward(is_train=True)
    onp.testing.assert_allclose(out.asnumpy(), X ** 3, rtol=1e-12)
    head = onp.array([[1.0, 2.0, -1.0], [0.5, 1.0, 3.0]])
    exe.backward([mx.nd.array(head, dtype="float64")])
    onp.testing.assert_allclose(grads["x"].asnumpy(), 3 * X ** 2 * head, rtol=1e-12)
    assert op.seen and all(t is onp.ndarray for t in op.seen)


def test_numpy_op_matches_mxnet_fixture():
    ref = json.loads(FIXTURE.read_text())
    op = Loss()
    sym = op(label=mx.sym.Variable("l"), data=mx.sym.Variable("d"), name="loss")  # by name, out of order
    assert sym.list_arguments() == ref["arguments"] and sym.list_outputs() == ref["outputs"]
    assert [list(map(list, s)) for s in sym.infer_shape(d=(2, 3), l=(2, 3))] == ref["infer_shape"]
    node = json.loads(sym.tojson())["nodes"][-1]
    assert node["op"] == ref["node_op"] and sorted(node["attrs"]) == ref["node_attrs"]
    assert node["attrs"]["need_top_grad"] == ref["need_top_grad"]
    data, label = onp.array(ref["data"], onp.float32), onp.array(ref["label"], onp.float32)
    exe, grads = _bind(sym, d=data, l=label)
    onp.testing.assert_allclose(exe.forward(is_train=True)[0].asnumpy(), ref["out"], rtol=1e-6)
    exe.backward([mx.nd.ones((2, 3))])
    onp.testing.assert_allclose(grads["d"].asnumpy(), ref["grad_d"], rtol=1e-6)
    onp.testing.assert_allclose(grads["l"].asnumpy(), ref["grad_l"], rtol=1e-6)
    assert op.out_grads == [[]]  # need_top_grad=False: backward gets no output gradient


def test_numpy_op_two_outputs_with_own_shapes():
    sym = SplitRows()(mx.sym.Variable("x"), name="split")
    assert len(sym.list_outputs()) == 2
    assert sym.infer_shape(x=(2, 3))[1] == [(2, 3), (2,)]
    exe, grads = _bind(sym, x=X)
    double, rowsum = exe.forward(is_train=True)
    onp.testing.assert_allclose(double.asnumpy(), 2 * X)
    onp.testing.assert_allclose(rowsum.asnumpy(), X.sum(axis=1))
    exe.backward([mx.nd.ones((2, 3), dtype="float64"), mx.nd.array([1.0, 10.0], dtype="float64")])
    onp.testing.assert_allclose(grads["x"].asnumpy(), 2 + onp.array([[1.0], [10.0]]) * onp.ones((2, 3)))


def test_ndarray_op_sees_legacy_ndarrays_and_gradients_match_finite_differences():
    op = Scale()
    sym = op(mx.sym.Variable("x"))
    (out_name,) = sym.list_outputs()
    assert out_name.startswith("_ndarray") and out_name.endswith("_output")  # auto-named as MXNet: _ndarray<n>
    assert json.loads(sym.tojson())["nodes"][-1]["op"] == "_NDArray"
    # a composite: sum((3x)^2), whose gradient 18x we check by finite differences
    loss = mx.sym.sum(mx.sym.square(sym))
    exe, grads = _bind(loss, x=X)
    value = exe.forward(is_train=True)[0].asnumpy()
    onp.testing.assert_allclose(value, (9 * X ** 2).sum(), rtol=1e-12)
    exe.backward()
    eps, numeric = 1e-6, onp.zeros_like(X)
    for idx in onp.ndindex(X.shape):
        step = onp.zeros_like(X)
        step[idx] = eps
        numeric[idx] = (((3 * (X + step)) ** 2).sum() - ((3 * (X - step)) ** 2).sum()) / (2 * eps)
    onp.testing.assert_allclose(grads["x"].asnumpy(), numeric, rtol=1e-6)
    assert all(a is mx.nd.NDArray and b is mx.nd.NDArray for a, b in op.types)
    assert op.declare_backward_dependency([0], [1], [2]) == [0]


def test_ndarray_op_default_backward_dependency():
    assert mx.operator.NDArrayOp(True).declare_backward_dependency([0], [1], [2]) == [0, 1, 2]
    assert mx.operator.NDArrayOp(False).declare_backward_dependency([0], [1], [2]) == [1, 2]


def test_symbol_block_records_autograd_through_numpy_op():
    x = mx.sym.var("x")
    block = mx.gluon.SymbolBlock(Cube()(x), [x])
    a = mx.nd.array(X, dtype="float64")
    a.attach_grad()
    with mx.autograd.record():
        y = block(a)
    y.backward()
    onp.testing.assert_allclose(y.asnumpy(), X ** 3, rtol=1e-12)
    onp.testing.assert_allclose(a.grad.asnumpy(), 3 * X ** 2, rtol=1e-12)


def test_missing_inputs_become_variables_and_json_round_trips_in_process():
    op = Cube()
    sym = op(name="c")
    assert sym.list_arguments() == ["c_data"]
    loaded = mx.sym.load_json(sym.tojson())
    assert loaded.infer_shape(c_data=(4,))[1] == [(4,)]
    out = loaded._bind(mx.cpu(), {"c_data": mx.nd.array([1.0, 2.0, 3.0, -1.0])}).forward()[0]
    onp.testing.assert_allclose(out.asnumpy(), [1.0, 8.0, 27.0, -1.0])
    assert op in mx.operator.PythonOp._ref_holder


def test_defaults_and_deprecation_warnings():
    with pytest.warns(UserWarning, match="NumpyOp has been deprecated"):
        op = mx.operator.NumpyOp()
    assert op.list_arguments() == ["data"] and op.list_outputs() == ["output"]
    assert op.infer_shape([[2, 3]]) == ([[2, 3]], [[2, 3]]) and op.need_top_grad() is True
    out, grad = onp.zeros(3), onp.zeros(3)
    op.forward([onp.arange(3.0)], [out])
    op.backward([onp.ones(3)], [onp.arange(3.0)], [out], [grad])
    onp.testing.assert_array_equal(out, [0.0, 1.0, 2.0])
    onp.testing.assert_array_equal(grad, [1.0, 1.0, 1.0])
    with pytest.raises(NotImplementedError, match="Must override this"):
        mx.operator.PythonOp()(mx.sym.var("x"))


def test_bad_input_errors():
    x = mx.sym.var("x")
    with pytest.raises(mx.MXNetError, match=r"got 2 inputs; list_arguments\(\) declares 1 \(\['data'\]\)"):
        Cube()(x, mx.sym.var("y"))
    with pytest.raises(mx.MXNetError, match=r"inputs \['foo'\] are not among the remaining arguments"):
        Cube()(foo=x)
    with pytest.raises(TypeError, match="input 'data' must be a Symbol, got ndarray"):
        Cube()(X)

    class BadShapes(mx.operator.NumpyOp):
        def infer_shape(self, in_shape):
            return in_shape

    with pytest.raises(mx.MXNetError, match=r"infer_shape must return \(argument shapes, output shapes\)"):
        BadShapes()(x).infer_shape(x=(2,))

    class Boom(mx.operator.NumpyOp):
        def forward(self, in_data, out_data):
            raise ValueError("kaboom")

    block = mx.gluon.SymbolBlock(Boom()(x), [x])
    with pytest.raises(mx.MXNetError, match=r"Custom operator 'Boom@[0-9a-f]+': forward raised ValueError: kaboom"):
        block(mx.nd.array([1.0])).asnumpy()
    stale = {"nodes": [{"op": "null", "name": "x", "inputs": []},
                       {"op": "_Native", "name": "n", "attrs": {"info": "dead", "need_top_grad": "True"},
                        "inputs": [[0, 0, 0]]}], "arg_nodes": [0], "heads": [[1, 0, 0]]}
    with pytest.raises(mx.MXNetError, match="no live NumpyOp/NDArrayOp with info 'dead'"):
        mx.sym.load_json(json.dumps(stale))


def test_base_names_are_mxjax_base_objects():
    op = mx.operator
    assert op.NDArray is mx.nd.NDArray
    assert op.check_call is base.check_call and op.c_str is base.c_str and op.py_str is base.py_str
    assert op.c_array is base.c_array and op.c_array_buf is base.c_array_buf
    assert op.ctypes2numpy_shared is base.ctypes2numpy_shared and op.MXCallbackList is base.MXCallbackList
    assert op.is_np_array is mx.util.is_np_array
    assert op.c_int_p is ctypes.POINTER(ctypes.c_int)
    values = (ctypes.c_int * 3)(4, 5, 6)
    assert ctypes.cast(values, op.c_int_p)[2] == 6
