"""The network and its loss: a small CNN, and cross-entropy that also averages the hard examples."""
from __future__ import annotations

from mxjax import np
from mxjax.gluon import nn


def build_net() -> nn.HybridSequential:
    """Two conv/pool stages and two dense layers: (N, 1, 8, 8) images to (N, 10) logits."""
    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, kernel_size=3, padding=1, activation="relu"),
            nn.MaxPool2D(pool_size=2),                      # 8x8 -> 4x4
            nn.Conv2D(32, kernel_size=3, padding=1, activation="relu"),
            nn.MaxPool2D(pool_size=2),                      # 4x4 -> 2x2
            nn.Flatten(),
            nn.Dense(64, activation="relu"),
            nn.Dense(10))
    return net


def mined_loss(per_example: np.ndarray) -> np.ndarray:
    """Hard-example mining: the mean loss plus the mean over the examples at or above the batch
    median.  ``per_example[hard]`` has as many rows as the mask has True values, a shape known
    only once the values are, so this step has a dynamic-shape segment.  Returns a scalar."""
    hard = per_example >= np.median(per_example)  # never empty: the largest loss is at or above the median
    hard_losses = per_example[hard]
    return per_example.mean() + hard_losses.mean()
