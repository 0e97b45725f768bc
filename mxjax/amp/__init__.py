"""``mx.amp``: automatic mixed precision (float16 on GPUs, bfloat16 on CPUs) and loss scaling."""
from . import amp, lists, loss_scaler
from .amp import *  # noqa: F401,F403
from .amp import __all__
