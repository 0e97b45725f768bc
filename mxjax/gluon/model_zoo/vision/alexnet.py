"""AlexNet, in the single-tower form of Krizhevsky's "One weird trick..." (arXiv:1404.5997)."""
__all__ = ['AlexNet', 'alexnet']

from ....device import cpu
from ....util import use_np, wrap_ctx_to_device_func
from ... import nn
from ._common import Classifier, MODELS_DIR, load_pretrained


@use_np
class AlexNet(Classifier):
    """Five ReLU convolutions with three max-pools, two dropout-regularised 4096-unit layers, then ``classes`` logits."""

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        f = self.features = nn.HybridSequential()
        for i, (ch, k, s, p) in enumerate([(64, 11, 4, 2), (192, 5, 1, 2), (384, 3, 1, 1),
                                           (256, 3, 1, 1), (256, 3, 1, 1)]):
            f.add(nn.Conv2D(ch, kernel_size=k, strides=s, padding=p, activation='relu'))
            if i in (0, 1, 4):
                f.add(nn.MaxPool2D(pool_size=3, strides=2))
        f.add(nn.Flatten())
        for _ in range(2):
            f.add(nn.Dense(4096, activation='relu'), nn.Dropout(0.5))
        self.output = nn.Dense(classes)


@wrap_ctx_to_device_func
def alexnet(pretrained=False, device=cpu(), root=MODELS_DIR, **kwargs):
    """AlexNet; ``pretrained=True`` loads MXNet's ImageNet weights from ``root`` onto ``device``."""
    net = AlexNet(**kwargs)
    return load_pretrained(net, 'alexnet', root, device) if pretrained else net
