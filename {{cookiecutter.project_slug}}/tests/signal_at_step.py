"""Test helper: the training process sends itself a real signal at a chosen optimizer step.

A signal from outside lands wherever training happens to be; this one lands at a known step, so
that the test knows it stopped mid-epoch. What follows the signal is exactly what a preemption or
a Ctrl-C sets off.
"""

import os
import signal
import time

import lightning as L


class SignalAtStep(L.Callback):
    """Sends ``signal_name`` at optimizer step ``step``, from process ``rank`` (all when None)."""

    def __init__(self, step: int, signal_name: str = "SIGTERM", rank: int | None = None) -> None:
        self.step = step
        self.signal = signal.Signals[signal_name]
        self.rank = rank

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx: int) -> None:
        if trainer.global_step == self.step and self.rank in (None, trainer.global_rank):
            print(f"signal sent at {time.time()}", flush=True)
            os.kill(os.getpid(), self.signal)
