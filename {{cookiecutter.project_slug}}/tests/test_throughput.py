"""The throughput callback logs samples per second every N batches, validation left out."""

from types import SimpleNamespace

import pytest
import torch

from {{ cookiecutter.package_name }} import throughput
from {{ cookiecutter.package_name }}.throughput import ThroughputLogger

from .conftest import RecordingLogger


class FakeClock:
    """Stands in for time.perf_counter: the tests set how long each batch takes."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(throughput, "time", fake)
    return fake


def fake_trainer(logger: RecordingLogger, world_size: int = 1) -> SimpleNamespace:
    strategy = SimpleNamespace(root_device=torch.device("cpu"))
    return SimpleNamespace(
        strategy=strategy, loggers=[logger], world_size=world_size, global_step=0
    )


def train_batches(callback: ThroughputLogger, trainer, clock: FakeClock, count: int) -> None:
    """Batches of 8 samples, 10 ms each."""
    batch = (torch.zeros(8, 4), torch.zeros(8))
    for batch_idx in range(count):
        callback.on_train_batch_start(trainer, None, batch, batch_idx)
        clock.now += 0.01
        trainer.global_step += 1
        callback.on_train_batch_end(trainer, None, None, batch, batch_idx)


def test_logs_samples_per_second_of_all_processes_every_n_batches(clock):
    logger = RecordingLogger()
    trainer, callback = fake_trainer(logger, world_size=2), ThroughputLogger(every_n_batches=3)
    train_batches(callback, trainer, clock, count=7)
    assert [step for step, _ in logger.logged] == [3, 6]
    for _, metrics in logger.logged:  # 3 batches of 8 on 2 processes in 30 ms
        assert metrics["train/samples_per_sec"] == pytest.approx(3 * 8 * 2 / 0.03)
    assert "train/peak_memory_mib" not in logger.logged[0][1]  # a CPU has no such counter


def test_validation_time_is_left_out(clock):
    logger = RecordingLogger()
    trainer, callback = fake_trainer(logger), ThroughputLogger(every_n_batches=2)
    train_batches(callback, trainer, clock, count=1)
    callback.on_validation_start(trainer, None)
    clock.now += 0.2
    callback.on_validation_end(trainer, None)
    train_batches(callback, trainer, clock, count=1)
    [(_, metrics)] = logger.logged
    assert metrics["train/samples_per_sec"] == pytest.approx(16 / 0.02)  # not 16 / 0.22


def test_window_must_hold_a_batch():
    with pytest.raises(ValueError, match="every_n_batches must be >= 1"):
        ThroughputLogger(every_n_batches=0)
