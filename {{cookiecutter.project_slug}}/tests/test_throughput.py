"""The throughput callback logs samples per second every N batches, validation left out."""

import time
from types import SimpleNamespace

import pytest
import torch

from {{ cookiecutter.package_name }}.throughput import ThroughputLogger


class RecordingLogger:
    def __init__(self) -> None:
        self.logged: list[tuple[int, dict]] = []

    def log_metrics(self, metrics: dict, step: int) -> None:
        self.logged.append((step, metrics))


def fake_trainer(logger: RecordingLogger, world_size: int = 1) -> SimpleNamespace:
    strategy = SimpleNamespace(root_device=torch.device("cpu"))
    return SimpleNamespace(
        strategy=strategy, loggers=[logger], world_size=world_size, global_step=0
    )


def train_batches(callback: ThroughputLogger, trainer, count: int, seconds: float = 0.0) -> None:
    batch = (torch.zeros(8, 4), torch.zeros(8))
    for batch_idx in range(count):
        callback.on_train_batch_start(trainer, None, batch, batch_idx)
        time.sleep(seconds)
        trainer.global_step += 1
        callback.on_train_batch_end(trainer, None, None, batch, batch_idx)


def test_logs_samples_per_second_of_all_processes_every_n_batches():
    logger = RecordingLogger()
    trainer, callback = fake_trainer(logger, world_size=2), ThroughputLogger(every_n_batches=3)
    train_batches(callback, trainer, count=7, seconds=0.01)
    assert [step for step, _ in logger.logged] == [3, 6]
    samples_per_sec = logger.logged[0][1]["train/samples_per_sec"]
    assert 0 < samples_per_sec <= 3 * 8 * 2 / 0.03  # 3 batches of 8 on 2 processes, >= 30 ms
    assert "train/peak_memory_mib" not in logger.logged[0][1]  # a CPU has no such counter


def test_validation_time_is_left_out():
    logger = RecordingLogger()
    trainer, callback = fake_trainer(logger), ThroughputLogger(every_n_batches=2)
    train_batches(callback, trainer, count=1)
    callback.on_validation_start(trainer, None)
    time.sleep(0.2)
    callback.on_validation_end(trainer, None)
    train_batches(callback, trainer, count=1)
    [(_, metrics)] = logger.logged
    assert metrics["train/samples_per_sec"] > 16 / 0.1  # the 0.2 s of validation not counted


def test_window_must_hold_a_batch():
    with pytest.raises(ValueError, match="every_n_batches must be >= 1"):
        ThroughputLogger(every_n_batches=0)
