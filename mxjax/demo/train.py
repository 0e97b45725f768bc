"""Training, evaluation, and the export / re-import round trip."""
from __future__ import annotations

import os

import numpy as onp
from tqdm import tqdm

import mxjax as mx
from mxjax import autograd, gluon, np

from .model import mined_loss
from .options import DemoError

MODEL_NAME = "digits-cnn"


def fit(net: gluon.HybridBlock, train_loader: gluon.data.DataLoader, test_loader: gluon.data.DataLoader,
        device: mx.Device, epochs: int, learning_rate: float, quiet: bool) -> float:
    """Train ``net`` for ``epochs`` with Adam, a progress bar per epoch; returns the last test accuracy."""
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": learning_rate})
    cross_entropy = gluon.loss.SoftmaxCrossEntropyLoss()
    accuracy = 0.0
    for epoch in range(1, epochs + 1):
        losses = []
        with tqdm(total=len(train_loader), desc=f"epoch {epoch}/{epochs}", unit="batch",
                  disable=quiet, dynamic_ncols=True) as bar:
            for images, labels in train_loader:
                images, labels = images.to_device(device), labels.to_device(device)
                with autograd.record():
                    loss = mined_loss(cross_entropy(net(images), labels))
                loss.backward()
                trainer.step(1)  # the loss is already a mean over the batch
                losses.append(loss)
                bar.update()
            accuracy = evaluate(net, test_loader, device)
            # one read per epoch: reading the loss at every step would wait for each step to finish
            bar.set_postfix(loss=f"{float(np.stack(losses).mean()):.4f}", test_accuracy=f"{accuracy:.4f}")
    return accuracy


def predict(net: gluon.HybridBlock, loader: gluon.data.DataLoader, device: mx.Device) -> tuple[onp.ndarray, onp.ndarray]:
    """Logits and labels of every example of ``loader``, as host arrays."""
    logits, labels = [], []
    for images, batch_labels in loader:
        logits.append(net(images.to_device(device)).asnumpy())
        labels.append(batch_labels.asnumpy())
    return onp.concatenate(logits), onp.concatenate(labels).astype(onp.int64)


def evaluate(net: gluon.HybridBlock, loader: gluon.data.DataLoader, device: mx.Device) -> float:
    """Top-1 accuracy of ``net`` over ``loader`` (``gluon.metric.Accuracy``)."""
    metric = gluon.metric.Accuracy()
    for images, labels in loader:
        metric.update(labels.to_device(device), net(images.to_device(device)))
    return float(metric.get()[1])


def export_and_reimport(net: gluon.HybridBlock, loader: gluon.data.DataLoader, device: mx.Device,
                        out_dir: str) -> list[str]:
    """Export ``net``, load it back with ``SymbolBlock.imports`` and check that both predict the
    same on ``loader``; returns the files written."""
    symbol_file, params_file = net.export(os.path.join(out_dir, MODEL_NAME))
    imported = gluon.SymbolBlock.imports(symbol_file, ["data"], params_file, device=device)
    trained_logits, _ = predict(net, loader, device)
    imported_logits, _ = predict(imported, loader, device)
    if not (onp.array_equal(trained_logits.argmax(1), imported_logits.argmax(1))
            and onp.allclose(trained_logits, imported_logits, rtol=1e-5, atol=1e-5)):
        worst = float(onp.abs(trained_logits - imported_logits).max())
        raise DemoError(f"the re-imported model predicts differently from the trained one "
                        f"(largest logit difference {worst:.3g}); please report this as an mxjax bug")
    return [symbol_file, params_file]
