"""``repr`` of Gluon layers is MXNet 2.0's text (fixtures written by MXNet 2.0.0b1 from the same
source: tools/make_repr_fixtures.py, which says which cases it leaves out and why)."""
import json
import pathlib

import pytest

from mxjax import gluon
from mxjax.gluon import nn, rnn

FIXTURES = json.loads((pathlib.Path(__file__).parent.parent / "fixtures" / "gluon_repr" / "reprs.json").read_text())


def _build(source):
    *statements, last = source.split("\n")
    scope = {"nn": nn, "rnn": rnn, "gluon": gluon}
    exec("\n".join(statements), scope)  # noqa: S102  (the fixture's own case source)
    return eval(last, scope)  # noqa: S307


@pytest.mark.parametrize("source", sorted(FIXTURES["reprs"]))
def test_repr_is_mxnets(source):
    assert repr(_build(source)) == FIXTURES["reprs"][source]


def test_convolution_names_its_true_input_channels():
    """Where MXNet 2.0.0b1 prints ``-1 ->`` for a convolution given its input channels (and reads the
    kernel size for channel-last or grouped ones), mxjax prints the number, as MXNet 1.9.1 does."""
    assert repr(nn.Conv2D(8, 3, in_channels=3)) == "Conv2D(3 -> 8, kernel_size=(3, 3), stride=(1, 1))"
    assert repr(nn.Conv2D(8, 3, in_channels=4, layout="NHWC")).startswith("Conv2D(4 -> 8,")
    assert repr(nn.Conv2D(8, 3, in_channels=4, groups=2)).endswith("stride=(1, 1), groups=2)")
    assert repr(nn.Conv2D(8, 3, in_channels=4, groups=2)).startswith("Conv2D(4 -> 8,")
    assert repr(nn.Conv2DTranspose(8, 3, output_padding=1, strides=2, in_channels=4)) == \
        "Conv2DTranspose(4 -> 8, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))"
