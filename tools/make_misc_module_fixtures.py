"""Writes tests/fixtures/misc_modules: what real MXNet 2.0 gives for its small top-level modules.

Run from the repository root with the reference MXNet 2.0 virtualenv's python
(``$REF_DIR`` is where ``shared/tools/reference-venvs.sh`` built them):

    $REF_DIR/mxnet20/bin/python tools/make_misc_module_fixtures.py

* ``signatures.json``: ``inspect.signature`` of each ``mx.np``/``mx.npx`` function that
  ``mx.numpy_op_signature`` sets from ``_numpy_op_doc`` (parameter names and defaults).
* ``build_doc.json``: the docstrings ``mx.ndarray_doc._build_doc`` and
  ``mx.symbol_doc._build_doc`` write for an op with an extra ``<op>Doc`` class.
* ``legacy_numpy_op.json``: a two-input ``NumpyOp`` loss layer (``need_top_grad=False``)
  bound with ``Symbol._bind``: its argument and output names, inferred shapes, outputs
  and input gradients.  (Multi-output NumpyOps and NDArrayOp's backward are broken in
  2.0.0b1, so the fixture keeps to what works there.)
"""
import inspect
import json
import pathlib
import warnings

import mxnet as mx
import numpy as np
from mxnet import _numpy_op_doc, ndarray_doc, numpy_op_signature, symbol_doc

OUT = pathlib.Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "misc_modules"


def signatures():
    table = {}
    for name in dir(_numpy_op_doc):
        op = numpy_op_signature._get_builtin_op(name)
        if op is not None:
            params = inspect.signature(op).parameters.values()
            table[name] = [[p.name, None if p.default is p.empty else p.default, p.default is p.empty]
                           for p in params]
    return table


class FixtureOpDoc(ndarray_doc.NDArrayDoc):
    """
    Examples
    --------
    >>> fixture_op(x)
    """


class FixtureOpSymDoc(symbol_doc.SymbolDoc):
    """
    Examples
    --------
    >>> FixtureOpSym(data=x)
    """


def build_docs():
    args = (["data", "num_args", "scale", "data"], ["NDArray-or-Symbol", "int", "float, optional", "NDArray-or-Symbol"],
            ["Input data.", "Count.", "A factor.", "Dup."])
    return {
        "ndarray": ndarray_doc._build_doc("FixtureOp", "Does a thing.", *args),
        "ndarray_plain": ndarray_doc._build_doc("NoExtra", "Plain.", *args),
        "symbol": symbol_doc._build_doc("FixtureOpSym", "Does a thing.", *args, key_var_num_args="num_args"),
    }


class Loss(mx.operator.NumpyOp):
    def __init__(self):
        super().__init__(False)

    def list_arguments(self):
        return ["data", "label"]

    def forward(self, in_data, out_data):
        out_data[0][:] = (in_data[0] - in_data[1]) ** 2

    def backward(self, out_grad, in_data, out_data, in_grad):
        assert out_grad == []  # need_top_grad=False: no output gradient
        in_grad[0][:] = 2 * (in_data[0] - in_data[1])
        in_grad[1][:] = -2 * (in_data[0] - in_data[1])


def legacy_numpy_op():
    data = np.array([[1.0, 2.0, -1.0], [0.5, 3.0, 2.0]], dtype=np.float32)
    label = np.array([[0.0, 2.5, 1.0], [1.0, -1.0, 2.0]], dtype=np.float32)
    sym = Loss()(label=mx.sym.Variable("l"), data=mx.sym.Variable("d"), name="loss")
    grads = {"d": mx.nd.zeros(data.shape), "l": mx.nd.zeros(data.shape)}
    exe = sym._bind(mx.cpu(), {"d": mx.nd.array(data), "l": mx.nd.array(label)}, args_grad=grads)
    out = exe.forward(is_train=True)[0].asnumpy()
    exe.backward()
    node = json.loads(sym.tojson())["nodes"][-1]
    return {"data": data.tolist(), "label": label.tolist(), "arguments": sym.list_arguments(),
            "outputs": sym.list_outputs(), "infer_shape": [list(map(list, s)) for s in sym.infer_shape(d=(2, 3), l=(2, 3))],
            "node_op": node["op"], "node_attrs": sorted(k for k in node["attrs"] if not k.startswith("__")),
            "need_top_grad": node["attrs"]["need_top_grad"],
            "out": out.tolist(), "grad_d": grads["d"].asnumpy().tolist(), "grad_l": grads["l"].asnumpy().tolist()}


def main():
    warnings.simplefilter("ignore")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "signatures.json").write_text(json.dumps(signatures(), indent=1) + "\n")
    (OUT / "build_doc.json").write_text(json.dumps(build_docs(), indent=1) + "\n")
    (OUT / "legacy_numpy_op.json").write_text(json.dumps(legacy_numpy_op(), indent=1) + "\n")


if __name__ == "__main__":
    main()
