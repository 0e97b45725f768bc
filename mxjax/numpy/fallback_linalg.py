"""``mx.np.fallback_linalg``: NumPy linear algebra functions run on host NumPy (as in MXNet 2.0).

mx arrays in, mx arrays out (same dtype, the inputs' device); not differentiable -- under
``autograd.record()`` they raise ``ValueError``.  ``mx.np.linalg`` binds these names to real
ops; this module keeps the host versions MXNet's module lists.
"""
from __future__ import annotations

import numpy as onp

from .fallback import host_function

__all__ = ["cond", "matrix_power", "multi_dot"]

cond = host_function(onp.linalg.cond, "cond", namespace="np.linalg")
matrix_power = host_function(onp.linalg.matrix_power, "matrix_power", namespace="np.linalg")
multi_dot = host_function(onp.linalg.multi_dot, "multi_dot", namespace="np.linalg")
