"""Training speed as the run goes: samples per second and, on a GPU, peak memory."""

import time

import lightning as L
import torch


class ThroughputLogger(L.Callback):
    """Logs ``train/samples_per_sec`` and, on CUDA, ``train/peak_memory_mib`` every N batches.

    A GPU runs behind the Python code, so timing it needs a synchronisation. Lightning's
    ``ThroughputMonitor`` synchronises after every batch, which stalls the queue of work each
    step; this callback does so once per window of ``every_n_batches`` training batches.
    Validation is left out of the time; checkpoint writes and logging count as training.

    Args:
        every_n_batches: Training batches per measurement. Samples are counted over all
            processes, assuming each trains on batches of the same size (as DDP's sampler gives).
    """

    def __init__(self, every_n_batches: int = 50) -> None:
        if every_n_batches < 1:
            raise ValueError(f"throughput.every_n_batches must be >= 1, not {every_n_batches}")
        self.every_n_batches = every_n_batches
        self._window_start: float | None = None  # None: no window open
        self._validation_start = 0.0
        self._samples = 0
        self._batches = 0

    def on_train_batch_start(
        self, trainer: L.Trainer, pl_module: L.LightningModule, batch, batch_idx: int
    ) -> None:
        if self._window_start is None:
            synchronize(trainer)
            self._window_start = time.perf_counter()
            self._samples = self._batches = 0

    def on_train_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs, batch, batch_idx: int
    ) -> None:
        self._samples += len(batch[0])  # the batch's size is known on the CPU: no sync
        self._batches += 1
        if self._batches < self.every_n_batches:
            return
        synchronize(trainer)
        seconds = time.perf_counter() - self._window_start
        metrics = {"train/samples_per_sec": self._samples * trainer.world_size / seconds}
        device = trainer.strategy.root_device
        if device.type == "cuda":
            metrics["train/peak_memory_mib"] = torch.cuda.max_memory_allocated(device) / 2**20
            torch.cuda.reset_peak_memory_stats(device)
        for logger in trainer.loggers:
            logger.log_metrics(metrics, step=trainer.global_step)
        self._window_start = None

    def on_validation_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._validation_start = time.perf_counter()

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if self._window_start is not None:  # validation inside a window: not training time
            self._window_start += time.perf_counter() - self._validation_start


def synchronize(trainer: L.Trainer) -> None:
    """Wait for the GPU's queued work, so that the clock measures finished work."""
    if trainer.strategy.root_device.type == "cuda":
        torch.cuda.synchronize(trainer.strategy.root_device)
