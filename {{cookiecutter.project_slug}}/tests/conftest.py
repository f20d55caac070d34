"""Shared helpers: run ``train.py`` as a user does, in a subprocess, and find what it wrote."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from lightning.pytorch.loggers import Logger

PROJECT_ROOT = Path(__file__).resolve().parents[1]

# Small, quiet runs: a few batches, no progress bar or model summary in the captured output.
FAST = [
    "--trainer.max_epochs=1",
    "--trainer.limit_train_batches=3",
    "--trainer.limit_val_batches=2",
    "--trainer.limit_test_batches=2",
    "--trainer.limit_predict_batches=2",
    "--trainer.enable_progress_bar=false",
    "--trainer.enable_model_summary=false",
]


def train(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``python train.py <args>`` from the project root and return the finished process."""
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    result = subprocess.run(
        [sys.executable, "train.py", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"train.py {' '.join(args)} exited with {result.returncode}:\n{result.stderr[-4000:]}"
        )
    return result


def run_folders(root: Path) -> list[Path]:
    """Every run folder under a ``--trainer.default_root_dir``, oldest first.

    Each holds its ``config.yaml``; W&B names its folders by random run ids, hence the sort by time.
    """
    configs = sorted(root.glob("*/*/config.yaml"), key=lambda path: path.stat().st_mtime)
    return [path.parent for path in configs]


def last_checkpoint(root: Path) -> Path:
    [run] = run_folders(root)  # a resumed run continues in its own folder: still one
    return run / "checkpoints" / "last.ckpt"


def max_weight_difference(a: Path, b: Path) -> float:
    weights_a = torch.load(a, weights_only=True)["state_dict"]
    weights_b = torch.load(b, weights_only=True)["state_dict"]
    return max(
        (weights_a[k].double() - weights_b[k].double()).abs().max().item() for k in weights_a
    )


class RecordingLogger(Logger):
    """Keeps what it is given, in memory, to compare with what training computed."""

    name, version = "recording", 0

    def __init__(self) -> None:
        super().__init__()
        self.logged: list[tuple[int, dict]] = []
        self.hyperparams: dict = {}

    def log_hyperparams(self, params, *args, **kwargs) -> None:
        self.hyperparams.update(params)

    def log_metrics(self, metrics: dict, step: int) -> None:
        self.logged.append((step, dict(metrics)))


def read_metrics(run_folder: Path, stage: str) -> dict[str, float]:
    return json.loads((run_folder / f"{stage}_metrics.json").read_text())


@pytest.fixture
def npz_file(tmp_path: Path) -> Path:
    """A small, learnable data set of the user's own: 3 classes of 2-D blobs."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=300)
    x = rng.normal(size=(300, 2)).astype(np.float32) + 4 * y[:, None]
    path = tmp_path / "blobs.npz"
    np.savez(path, x=x, y=y)
    return path
