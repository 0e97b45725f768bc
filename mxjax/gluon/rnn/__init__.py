"""``mx.gluon.rnn``: fused recurrent layers (RNN, LSTM, GRU) and recurrent cells (dense and convolutional)."""
from . import conv_rnn_cell, rnn_cell, rnn_layer
from .conv_rnn_cell import *  # noqa: F401,F403
from .conv_rnn_cell import __all__ as _conv_all
from .rnn_cell import *  # noqa: F401,F403
from .rnn_cell import __all__ as _cell_all
from .rnn_layer import *  # noqa: F401,F403
from .rnn_layer import __all__ as _layer_all

__all__ = _layer_all + _cell_all + _conv_all
