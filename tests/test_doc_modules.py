"""mx.ndarray_doc / mx.symbol_doc (oracle: the docstrings real MXNet 2.0 builds, tests/fixtures/misc_modules)."""
import json
import pathlib

import mxjax as mx
from mxjax import ndarray_doc, symbol_doc

REF = json.loads((pathlib.Path(__file__).resolve().parent / "fixtures" / "misc_modules" / "build_doc.json").read_text())
ARGS = (["data", "num_args", "scale", "data"], ["NDArray-or-Symbol", "int", "float, optional", "NDArray-or-Symbol"],
        ["Input data.", "Count.", "A factor.", "Dup."])


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


def test_build_doc_matches_mxnet():
    assert ndarray_doc._build_doc("FixtureOp", "Does a thing.", *ARGS) == REF["ndarray"]
    assert ndarray_doc._build_doc("NoExtra", "Plain.", *ARGS) == REF["ndarray_plain"]
    assert symbol_doc._build_doc("FixtureOpSym", "Does a thing.", *ARGS, key_var_num_args="num_args") == REF["symbol"]


def test_get_output_shape():
    sym = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=5, name="fc")
    assert symbol_doc.SymbolDoc.get_output_shape(sym, x=(3, 4)) == {"fc_output": (3, 5)}
    assert mx.ndarray_doc is ndarray_doc and mx.symbol_doc is symbol_doc
