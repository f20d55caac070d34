"""Lightning against plain PyTorch: the project's own training, timed beside a plain loop.

    python benchmarks/parity.py                                    # default config, 5 repetitions
    python benchmarks/parity.py --config configs/default.yaml --model.hidden_dim=512
    python benchmarks/parity.py --repeats 1 --trainer.max_epochs=1   # seconds: checks the script

The Lightning side is ``train.py fit`` as configured: its callbacks, metrics, logger, progress bar
and checkpoints (the arguments the benchmark does not know go to it, as to ``train.py``). The
plain side is the loop written out below, doing the same work without checkpoints or logs: the
same network and initial weights, batches, dropout masks, optimizer, scheduler, epochs, and
training and validation metrics. Each run is a fresh process, the two sides alternating; only
the training is timed, not the imports, the data loading or the loggers' start before it. Both
sides must end at the same validation accuracy. The last line printed is
``ratio <Lightning median / plain median>``.
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

SIDES = ("lightning", "plain")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Other arguments are train.py's (default: --config configs/default.yaml).",
    )
    parser.add_argument("--repeats", type=int, default=5, help="runs of each side (default 5)")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads per run (default 1: steadiest)"
    )
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)  # one run, in a child
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)  # where the child writes
    args, train_args = parser.parse_known_args()
    if args.repeats < 1 or args.threads < 1:
        parser.error("--repeats and --threads must be at least 1")
    if not any(arg.split("=")[0] in ("--config", "-c") for arg in train_args):
        train_args = ["--config", "configs/default.yaml", *train_args]
    if args.side is not None:
        args.result.write_text(json.dumps(run_one_side(args.side, train_args, args.threads)))
        return

    runs: dict[str, list[dict]] = {side: [] for side in SIDES}
    for repeat in range(args.repeats):
        # Neither side always runs first; plain starts, as it refuses a config it cannot mirror.
        order = SIDES[::-1] if repeat % 2 == 0 else SIDES
        for side in order:
            runs[side].append(run_in_child(side, train_args, args.threads))
        times = ", ".join(f"{side} {runs[side][-1]['seconds']:.3f} s" for side in SIDES)
        print(f"repetition {repeat + 1}/{args.repeats}: {times}", flush=True)
    report(runs, args.threads)


def run_in_child(side: str, train_args: list[str], threads: int) -> dict:
    """One run in a fresh process; its figures come back in a file, as loggers print to stdout."""
    with tempfile.TemporaryDirectory() as folder:
        result = Path(folder, "result.json")
        command = [sys.executable, __file__, "--side", side, "--threads", str(threads)]
        child = subprocess.run(
            [*command, "--result", str(result), *train_args], capture_output=True, text=True
        )
        if child.returncode != 0:
            error = child.stderr[-3000:]
            sys.exit(f"error: the {side} run failed (exit {child.returncode}):\n{error}")
        return json.loads(result.read_text())


def run_one_side(side: str, train_args: list[str], threads: int) -> dict:
    """Build the project as train.py does, then time one training run of one side."""
    from {{ cookiecutter.package_name }}.cli import create_cli  # here: the parent needs no Lightning

    torch.set_num_threads(threads)
    sys.argv = sys.argv[:1]  # the arguments go to the CLI as `args`: Lightning warns about both
    with tempfile.TemporaryDirectory() as root:
        cli = create_cli([*train_args, f"--trainer.default_root_dir={root}"], run=False)
        trainer, model, data = cli.trainer, cli.model, cli.datamodule
        device = trainer.strategy.root_device
        data.trainer = trainer  # as in fit: the loaders pin memory when training on a GPU
        if side == "lightning":
            for logger in trainer.loggers:
                _ = logger.experiment  # started before the clock: W&B takes seconds to start
            start = time.perf_counter()
            trainer.fit(model, datamodule=data)
            seconds = time.perf_counter() - start
            val_acc, data_seconds = trainer.callback_metrics["val/acc"].item(), None
        else:
            check_plain_loop_matches(trainer, model)
            start = time.perf_counter()
            val_acc, data_seconds = train_plain(model, data, trainer.max_epochs, device)
            seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "val_acc": val_acc,
        "data_seconds": data_seconds,
        "peak_memory_mib": peak_memory_mib(device),
        "memory_kind": "GPU allocated" if device.type == "cuda" else "process RSS",
        "device": str(device),
        "epochs": trainer.max_epochs,
        "batches_per_epoch": len(data.train_dataloader()),
        "samples_per_epoch": len(data.train_set),
    }


def check_plain_loop_matches(trainer, model) -> None:
    """The plain loop implements the default training only: refuse what it would do otherwise."""
    unsupported = {
        "trainer.precision": (trainer.precision, "32-true"),
        "trainer.accumulate_grad_batches": (trainer.accumulate_grad_batches, 1),
        "trainer.gradient_clip_val": (trainer.gradient_clip_val, None),
        "trainer.limit_train_batches": (trainer.limit_train_batches, 1.0),
        "trainer.limit_val_batches": (trainer.limit_val_batches, 1.0),
        "trainer.val_check_interval": (trainer.val_check_interval, 1.0),
        "trainer.check_val_every_n_epoch": (trainer.check_val_every_n_epoch, 1),
        "trainer.max_steps": (trainer.max_steps, -1),
        "model.accumulate_grad_batches": (model.hparams.get("accumulate_grad_batches", 1), 1),
        "model.gradient_clip_val": (model.hparams.get("gradient_clip_val"), None),
        "processes": (trainer.world_size, 1),
        "trainer.max_epochs": (trainer.max_epochs is None or trainer.max_epochs < 1, False),
    }
    for name, (value, supported) in unsupported.items():
        # Types count: limit_train_batches=1 is one batch, 1.0 is all of them.
        if value != supported or type(value) is not type(supported):
            sys.exit(f"error: the plain loop supports {name}={supported} only, not {value}")


def train_plain(model, data, epochs: int, device: torch.device) -> tuple[float, float]:
    """Train as a plain PyTorch loop would; return the last validation accuracy and the time
    spent waiting for batches."""
    from {{ cookiecutter.package_name }}.reproducibility import run_seed, seed_batch

    model.to(device)
    configured = model.configure_optimizers()
    optimizer = configured["optimizer"]
    scheduler = configured.get("lr_scheduler", {}).get("scheduler")
    train_loader, val_loader = data.train_dataloader(), data.val_dataloader()
    seed = run_seed()
    data_seconds = 0.0
    for epoch in range(epochs):
        train_loader.sampler.set_epoch(epoch)  # the epoch's shuffling order
        model.train()
        # Training loss and accuracy, summed on the device: no synchronisation a step.
        loss_sum, correct = torch.zeros((), device=device), torch.zeros((), device=device)
        fetch_start = time.perf_counter()
        batches = iter(train_loader)  # starts the workers, if there are any and they stopped
        data_seconds += time.perf_counter() - fetch_start
        for batch_idx in range(len(train_loader)):
            fetch_start = time.perf_counter()
            x, y = next(batches)
            data_seconds += time.perf_counter() - fetch_start
            if seed is not None:
                seed_batch(seed, 0, epoch, batch_idx)  # the dropout masks the project draws
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += loss.detach()
            correct += (logits.argmax(dim=1) == y).sum()
        val_acc = evaluate(model, val_loader, device)
        if scheduler is not None:
            scheduler.step()
    return val_acc, data_seconds


@torch.inference_mode()
def evaluate(model, loader, device: torch.device) -> float:
    model.eval()
    # Loss and accuracy, as the Lightning side logs val/loss and val/acc; the accuracy is returned.
    loss_sum, correct = torch.zeros((), device=device), torch.zeros((), device=device)
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        logits = model(x)
        loss_sum += F.cross_entropy(logits, y, reduction="sum")
        correct += (logits.argmax(dim=1) == y).sum()
    return correct.item() / len(loader.dataset)


def peak_memory_mib(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux, bytes on macOS
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def report(runs: dict[str, list[dict]], threads: int) -> None:
    first = runs["lightning"][0]
    epochs, batches = first["epochs"], first["batches_per_epoch"]
    medians = {side: statistics.median(run["seconds"] for run in runs[side]) for side in SIDES}
    print(
        f"\n{epochs} epochs of {batches} batches ({first['samples_per_epoch']} samples) on "
        f"{first['device']}, {threads} thread(s); each run a fresh process, training time only"
    )
    print(f"{'side':<10} {'median s':>9} {'min s':>7} {'samples/s':>10} {'peak MiB':>9}  val/acc")
    for side in SIDES:
        seconds = [run["seconds"] for run in runs[side]]
        samples_per_sec = epochs * first["samples_per_epoch"] / medians[side]
        memory = max(run["peak_memory_mib"] for run in runs[side])
        val_acc = runs[side][-1]["val_acc"]
        print(
            f"{side:<10} {medians[side]:>9.3f} {min(seconds):>7.3f} {samples_per_sec:>10.0f} "
            f"{memory:>9.0f}  {val_acc:.4f}"
        )
    print(f"peak memory: {first['memory_kind']}")
    extra = medians["lightning"] - medians["plain"]
    print(
        f"Lightning's extra time: {1000 * extra / epochs:.1f} ms an epoch, or "
        f"{1000 * extra / (epochs * batches):.2f} ms a batch"
    )
    loading = statistics.median(run["data_seconds"] / run["seconds"] for run in runs["plain"])
    print(f"data loading: {100 * loading:.1f}% of the plain loop's time")
    accuracies = {run["val_acc"] for side in SIDES for run in runs[side]}
    if max(accuracies) - min(accuracies) > 1e-6:
        sys.exit(f"error: the sides reached different validation accuracies {sorted(accuracies)}")
    print(f"ratio {medians['lightning'] / medians['plain']:.3f}")


if __name__ == "__main__":
    main()
