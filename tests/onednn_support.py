"""What the oneDNN convolution path takes on this machine's CPU, for tests that assert it ran."""
import functools

import jax.numpy as jnp

from mxjax._onednn import available, ops


@functools.lru_cache(maxsize=None)
def takes_bfloat16() -> bool:
    """Whether oneDNN runs bfloat16 convolutions here: it needs AVX-512 (or AMX) for them and
    rejects the configuration on a CPU without, where mxjax runs XLA's convolution instead."""
    if not available():
        return False
    x, w = jnp.ones((1, 16, 4, 4), jnp.bfloat16), jnp.ones((16, 16, 3, 3), jnp.bfloat16)
    return ops.maybe_convolution(x, w, None, (1, 1), (1, 1), (1, 1), 1, False) is not None


BFLOAT16_REASON = "oneDNN takes no bfloat16 convolution on this CPU (it needs AVX-512 or AMX)"
