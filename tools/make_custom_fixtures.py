"""Writes tests/fixtures/custom: what real MXNet 2.0 gives for a Python custom operator.

Run from the repository root with the reference MXNet 2.0 virtualenv's python
(``$REF_DIR`` is where ``shared/tools/reference-venvs.sh`` built them):

    $REF_DIR/mxnet20/bin/python tools/make_custom_fixtures.py

It registers ``fixture_prodsum`` (outputs ``scale * a * b`` and ``a + b``; with
``with_aux=True`` it also counts its training forwards in an auxiliary state), writes
the Symbol JSON MXNet produces for ``mx.sym.Custom`` and the numbers MXNet computes
imperatively: outputs, input gradients under ``autograd.record()``, and the auxiliary
state after the call.  tests/operator/test_custom.py defines the same op in mxjax.
"""
import json
import pathlib

import mxnet as mx
import numpy as np

OUT = pathlib.Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "custom"

A = [[1.0, 2.0], [-0.5, 3.0]]
B = [[0.5, -1.0], [2.0, 0.25]]
HEAD = [[1.0, -2.0], [0.5, 3.0]]  # the gradient fed to output 0 (output 1 gets ones)


class ProdSum(mx.operator.CustomOp):
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


@mx.operator.register("fixture_prodsum")
class ProdSumProp(mx.operator.CustomOpProp):
    def __init__(self, scale="1.0", with_aux="False"):
        super().__init__(need_top_grad=True)
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


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    sym = mx.sym.Custom(mx.sym.Variable("a"), mx.sym.Variable("b"), op_type="fixture_prodsum", scale=2.5,
                        name="ps")
    (OUT / "prodsum-symbol.json").write_text(sym.tojson())

    a, b = mx.nd.array(A, dtype="float64"), mx.nd.array(B, dtype="float64")
    count = mx.nd.zeros((1,), dtype="float64")
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        prod, total = mx.nd.Custom(a, b, count, op_type="fixture_prodsum", scale=2.5, with_aux=True)
    mx.autograd.backward([prod, total], [mx.nd.array(HEAD, dtype="float64"), mx.nd.ones((2, 2), dtype="float64")])
    record = {
        "a": A, "b": B, "head": HEAD, "scale": 2.5,
        "prod": prod.asnumpy().tolist(), "sum": total.asnumpy().tolist(),
        "grad_a": a.grad.asnumpy().tolist(), "grad_b": b.grad.asnumpy().tolist(),
        "count_after": count.asnumpy().tolist(),
        "list_arguments": sym.list_arguments(), "list_outputs": sym.list_outputs(),
    }
    (OUT / "prodsum.json").write_text(json.dumps(record) + "\n")
    print("wrote", sorted(p.name for p in OUT.iterdir()), "with mxnet", mx.__version__, np.__version__)


if __name__ == "__main__":
    main()
