"""``main``: the demo's command line, its run, and its summary."""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Sequence

import numpy as onp

import mxjax as mx

from . import data, model, train
from .options import DemoError, parse_device, prepare_out_dir

DEFAULT_OUT = "mxjax-demo-out"
LEARNING_RATE = 5e-3


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mxjax.demo",
        description="Train a small CNN on scikit-learn's handwritten digits through RecordIO files, "
                    "gluon.data and a hybridized network; export it and load it back.")
    parser.add_argument("--epochs", type=int, default=10, help="passes over the training set (default 10)")
    parser.add_argument("--batch-size", type=int, default=64, help="examples per batch (default 64)")
    parser.add_argument("--out", default=os.path.join(".", DEFAULT_OUT),
                        help=f"directory for the record files and the model (default ./{DEFAULT_OUT})")
    parser.add_argument("--device", default="cpu", help="cpu or gpu(N) (default cpu)")
    parser.add_argument("--seed", type=int, default=0, help="seed of initialization and shuffling (default 0)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars; print the summary only")
    return parser


def run(args: argparse.Namespace) -> None:
    """The demo itself; raises :class:`DemoError` for what the user can fix."""
    device = parse_device(args.device)
    splits = data.load_digits()
    out_dir = prepare_out_dir(args.out)
    start = time.perf_counter()
    accuracy, files = _train(args, device, splits, out_dir)
    trained_s = time.perf_counter() - start
    print(f"trained {args.epochs} epoch(s) in {trained_s:.1f} s; test accuracy {accuracy:.4f}")
    print("re-imported model (SymbolBlock.imports) predicts the same as the trained one")
    print(f"files written in {out_dir}:")
    print("  " + "  ".join(os.path.basename(f) for f in files))


def _train(args: argparse.Namespace, device: mx.Device, splits: tuple[data.Split, data.Split],
           out_dir: str) -> tuple[float, list[str]]:
    """Records, loaders, network, training, export: the test accuracy and the files written."""
    train_split, test_split = splits
    mx.random.seed(args.seed)
    onp.random.seed(args.seed)  # gluon.data's RandomSampler shuffles with NumPy's generator, as in MXNet
    files = [*data.write_records(train_split, out_dir, "train"), *data.write_records(test_split, out_dir, "test")]
    train_loader, test_loader = data.loaders(files[0], files[2], args.batch_size,
                                              data.pixel_stats(train_split))
    if not args.quiet:
        print(f"digits: {len(train_split.labels)} training and {len(test_split.labels)} test images, "
              f"{args.epochs} epochs of batch size {args.batch_size} on {device}")
    net = model.build_net()
    net.initialize(mx.init.Xavier(), device=device)
    net.hybridize()
    try:
        accuracy = train.fit(net, train_loader, test_loader, device, args.epochs, LEARNING_RATE, args.quiet)
    finally:
        train_loader.close()
    files += train.export_and_reimport(net, test_loader, device, out_dir)
    return accuracy, files


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo with command-line ``argv``; returns the exit code (0, 1 for an error, 2 for usage)."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        if args.epochs < 1 or args.batch_size < 1:
            parser.error(f"--epochs and --batch-size must be at least 1, got {args.epochs} and {args.batch_size}")
    except SystemExit as exit_:  # argparse's usage error (2) or --help (0): a code, not an exception
        return int(exit_.code or 0)
    try:
        run(args)
    except DemoError as err:
        print(f"mxjax.demo: error: {err}", file=sys.stderr)
        return 1
    except OSError as err:  # the disk filled up, the directory vanished mid-run, ...
        print(f"mxjax.demo: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("mxjax.demo: interrupted", file=sys.stderr)
        return 130
    return 0
