"""DataLoader throughput benchmarks.

1. JPEG decode + augment (Pillow decode of ~256x256 images held in memory, random 224 crop,
   random flip, float tensor, normalize; NumPy/Pillow work identical in both) with 2 workers:
   images/s through mxjax's DataLoader and through PyTorch's DataLoader.  The PyTorch half
   runs as a subprocess of the interpreter named by $TORCH_PYTHON (skipped if unset).
2. A hybridized MLP trained with a Trainer while 2 workers prepare batches whose transform
   costs about one training step: the share of wall time spent in the step.

Run: python benchmarks/dataloader.py [--images 512] [--batch-size 32]
"""
from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import time

import numpy as onp
from PIL import Image

MEAN = onp.array([0.485, 0.456, 0.406], dtype=onp.float32)
STD = onp.array([0.229, 0.224, 0.225], dtype=onp.float32)


def make_jpegs(count: int, size: int = 256, seed: int = 0) -> list[bytes]:
    rng = onp.random.RandomState(seed)
    yy, xx = onp.mgrid[0:size, 0:size]
    out = []
    for i in range(count):
        base = onp.stack([(xx * (i % 7 + 1)) % 256, (yy * (i % 5 + 1)) % 256, (xx + yy + i) % 256], -1)
        noise = rng.randint(0, 40, size=(size, size, 3))
        img = Image.fromarray(onp.clip(base + noise, 0, 255).astype(onp.uint8))
        buf = io.BytesIO()
        img.save(buf, format='JPEG', quality=90)
        out.append(buf.getvalue())
    return out


def decode_augment(jpeg: bytes, rng: onp.random.RandomState, crop: int = 224) -> onp.ndarray:
    img = onp.asarray(Image.open(io.BytesIO(jpeg)).convert('RGB'))
    h, w = img.shape[:2]
    y, x = rng.randint(0, h - crop + 1), rng.randint(0, w - crop + 1)
    img = img[y:y + crop, x:x + crop]
    if rng.rand() < 0.5:
        img = img[:, ::-1]
    tensor = (img.astype(onp.float32) / 255.0 - MEAN) / STD
    return onp.ascontiguousarray(tensor.transpose(2, 0, 1))


class JpegDataset:
    """In-memory JPEGs; items are (CHW float32 tensor, label).  Plain Python so both
    DataLoaders can use it."""

    def __init__(self, jpegs: list[bytes]):
        self.jpegs = jpegs
        self.rng = onp.random.RandomState(1)

    def __len__(self) -> int:
        return len(self.jpegs)

    def __getitem__(self, i: int):
        return decode_augment(self.jpegs[i], self.rng), i % 10


def _timed_epochs(loader, touch, epochs: int = 2) -> float:
    """Best images/s over ``epochs`` timed epochs, after one warm-up epoch (worker start)."""
    for batch in loader:
        touch(batch)
    best = 0.0
    for _ in range(epochs):
        count, start = 0, time.perf_counter()
        for batch in loader:
            touch(batch)
            count += batch[0].shape[0]
        best = max(best, count / (time.perf_counter() - start))
    return best


def bench_mxjax_images(images: int, batch_size: int, workers: int) -> float:
    from mxjax.gluon.data import DataLoader
    loader = DataLoader(JpegDataset(make_jpegs(images)), batch_size=batch_size, num_workers=workers)
    rate = _timed_epochs(loader, lambda b: b[0].wait_to_read())
    loader.close()
    return rate


def bench_torch_images(images: int, batch_size: int, workers: int) -> float:
    import torch
    from torch.utils.data import DataLoader, Dataset

    class TorchJpegs(Dataset):
        def __init__(self, inner):
            self.inner = inner

        def __len__(self):
            return len(self.inner)

        def __getitem__(self, i):
            data, label = self.inner[i]
            return torch.from_numpy(data), label

    torch.set_num_threads(1)
    loader = DataLoader(TorchJpegs(JpegDataset(make_jpegs(images))), batch_size=batch_size,
                        num_workers=workers, persistent_workers=workers > 0)
    return _timed_epochs(loader, lambda b: None)


def run_torch_half(images: int, batch_size: int, workers: int) -> float | None:
    python = os.environ.get('TORCH_PYTHON')
    if not python:
        print("  PyTorch half skipped: set TORCH_PYTHON to an interpreter with torch installed")
        return None
    out = subprocess.run([python, __file__, '--torch-half', '--images', str(images),
                          '--batch-size', str(batch_size), '--workers', str(workers)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])['images_per_s']


# ----------------------------------------------------------------------------- training loop

def _busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    acc = onp.ones(64, dtype=onp.float32)
    while time.perf_counter() < end:
        acc = onp.sqrt(acc * 1.0001 + 1.0)


class _FeatureDataset:
    """784-d samples whose transform costs ``cost`` seconds of CPU (or of waiting: ``io``)."""

    def __init__(self, count: int, cost: float, io_like: bool):
        self.data = onp.random.RandomState(0).rand(count, 784).astype(onp.float32)
        self.cost, self.io_like = cost, io_like

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, i: int):
        (time.sleep if self.io_like else _busy)(self.cost)
        return self.data[i], onp.int64(i % 10)


def bench_training(batch_size: int, batches: int, io_like: bool) -> dict:
    import mxjax as mx
    from mxjax import autograd, gluon
    from mxjax.gluon import nn
    from mxjax.gluon.data import DataLoader

    net = nn.HybridSequential()
    net.add(nn.Dense(1024, activation='relu'), nn.Dense(1024, activation='relu'), nn.Dense(10))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.01})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()

    def step(data, label):
        with autograd.record():
            loss = loss_fn(net(data), label)
        loss.backward()
        trainer.step(data.shape[0])
        loss.wait_to_read()

    x = mx.np.array(onp.random.rand(batch_size, 784).astype(onp.float32))
    y = mx.np.array(onp.arange(batch_size) % 10)
    for _ in range(5):
        step(x, y)
    start = time.perf_counter()
    for _ in range(20):
        step(x, y)
    step_time = (time.perf_counter() - start) / 20
    # calibrate: one batch's transform, measured in-process, should cost about one step
    dataset = _FeatureDataset(batch_size * batches, step_time / batch_size, io_like)
    for _ in range(3):
        start = time.perf_counter()
        for i in range(batch_size):
            dataset[i]
        transform_time = time.perf_counter() - start
        dataset.cost *= step_time / transform_time
    loader = DataLoader(dataset, batch_size=batch_size, num_workers=2)
    for i, (data, label) in enumerate(loader):  # warm-up: workers start, shapes compile
        step(data, label)
        if i == 2:
            break
    start = time.perf_counter()
    for _ in loader:
        pass
    loader_time = (time.perf_counter() - start) / len(loader)
    in_step, start = 0.0, time.perf_counter()
    for data, label in loader:
        t = time.perf_counter()
        step(data, label)
        in_step += time.perf_counter() - t
    wall = time.perf_counter() - start
    loader.close()
    return {'step_ms': step_time * 1e3, 'transform_ms_per_batch': transform_time * 1e3,
            'loader_alone_ms_per_batch': loader_time * 1e3, 'fraction_in_step': in_step / wall}


def bench_images(args: argparse.Namespace) -> None:
    print(f"[1] JPEG decode + augment, {args.images} images 256x256 -> 3x224x224 float32, "
          f"batch {args.batch_size}, {args.workers} workers")
    torch_rate, ours = None, 0.0
    for _ in range(args.rounds):  # alternate the two so that background load hits both alike
        rate = run_torch_half(args.images, args.batch_size, args.workers)
        torch_rate = None if rate is None else max(rate, torch_rate or 0.0)
        ours = max(ours, bench_mxjax_images(args.images, args.batch_size, args.workers))
    print(f"  mxjax DataLoader : {ours:8.1f} images/s")
    if torch_rate is not None:
        print(f"  torch DataLoader : {torch_rate:8.1f} images/s")
        print(f"  ratio mxjax/torch: {ours / torch_rate:8.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--images', type=int, default=512)
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--train-batches', type=int, default=40)
    parser.add_argument('--rounds', type=int, default=2, help='alternating rounds of part 1 (best kept)')
    parser.add_argument('--training-only', action='store_true', help='run part 2 only')
    parser.add_argument('--torch-half', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_half:
        print(json.dumps({'images_per_s': bench_torch_images(args.images, args.batch_size, args.workers)}))
        return
    if not args.training_only:
        bench_images(args)
    for io_like in (False, True):
        kind = 'I/O-like (sleep)' if io_like else 'CPU-bound (NumPy)'
        r = bench_training(64, args.train_batches, io_like)
        print(f"[2] training loop, 2 workers, {kind} transform: {r['transform_ms_per_batch']:.1f} ms/batch "
              f"in-process, loader alone {r['loader_alone_ms_per_batch']:.1f} ms/batch, step "
              f"{r['step_ms']:.1f} ms; fraction of wall time in the step = {r['fraction_in_step']:.3f}")


if __name__ == '__main__':
    main()
