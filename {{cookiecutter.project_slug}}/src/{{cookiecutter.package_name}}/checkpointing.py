"""Checkpoints that survive interruptions: atomic writes, a checkpoint on SIGTERM and Ctrl-C, and
a readable error for a checkpoint that does not fit the model."""

import os
import signal
from pathlib import Path

import lightning as L
import torch
from lightning.fabric.plugins import TorchCheckpointIO
from lightning.pytorch.utilities import rank_zero_info
from lightning.pytorch.utilities.exceptions import SIGTERMException


class AtomicCheckpointIO(TorchCheckpointIO):
    """Writes each checkpoint to a temporary file beside it, then renames it into place.

    A rename within one folder is atomic, so a crash or a kill during a save leaves the previous
    good file, never a truncated one. (Lightning's own writer stages the file in the system's
    temporary folder, and a move from there is a copy when it lies on another file system.)
    Remote paths (``s3://`` and the like) are left to Lightning.
    """

    def save_checkpoint(self, checkpoint: dict, path, storage_options=None) -> None:
        if "://" in str(path):
            super().save_checkpoint(checkpoint, path, storage_options)
            return
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
        try:
            with open(partial, "wb") as file:
                torch.save(checkpoint, file)
                file.flush()
                os.fsync(file.fileno())
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)


class StopOnSignal(L.Callback):
    """On SIGTERM (a scheduler's preemption) or Ctrl-C: finish the batch, save, exit.

    The signal only sets a flag. After each training batch the processes agree on whether any of
    them got one (under DDP a signal may reach only the main process, or reach the processes at
    different moments), and all stop after the same batch: Lightning then raises
    ``SIGTERMException``, and this callback writes ``last.ckpt`` with the state after that batch,
    so that ``--ckpt_path=last`` continues exactly where the run stopped. A second Ctrl-C
    interrupts at once, without a checkpoint. The process exits with status 128 + the signal's
    number: 143 for SIGTERM, 130 for Ctrl-C.
    (Lightning's own SIGTERM handler runs collectives inside the handler, which deadlocks DDP
    when the processes do not get the signal at the same step; this one replaces it during fit.)
    """

    def __init__(self) -> None:
        self.received: signal.Signals | None = None
        self._previous_handlers: dict = {}

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        for signum in (signal.SIGTERM, signal.SIGINT):
            self._previous_handlers[signum] = signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame) -> None:
        if self.received is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt  # Ctrl-C pressed again: stop now
        self.received = self.received or signal.Signals(signum)

    def on_train_batch_end(self, trainer: L.Trainer, pl_module, outputs, batch, batch_idx) -> None:
        # One small all-reduce a step under DDP; nothing with a single process.
        if trainer.strategy.reduce_boolean_decision(self.received is not None, all=False):
            self.received = self.received or signal.SIGTERM  # another process got it
            # Lightning's flag: the loop raises SIGTERMException once this batch is complete.
            trainer._signal_connector.received_sigterm = True

    def on_exception(
        self, trainer: L.Trainer, pl_module: L.LightningModule, exception: BaseException
    ) -> None:
        if not isinstance(exception, SIGTERMException):
            return
        self.received = self.received or signal.SIGTERM
        # SIGTERMException is a SystemExit: exit with the status a shell gives a stopped process.
        exception.code = 128 + self.received
        if trainer.sanity_checking or trainer.checkpoint_callback is None:
            return
        path = Path(trainer.checkpoint_callback.dirpath) / "last.ckpt"
        trainer.save_checkpoint(path)
        rank_zero_info(
            f"Stopped by {self.received.name} at epoch {trainer.current_epoch}, step "
            f"{trainer.global_step}; saved {path}. Continue with the same command and "
            f"--ckpt_path={path}"
        )

    def teardown(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        for signum, handler in self._previous_handlers.items():
            signal.signal(signum, handler)
        self._previous_handlers = {}


class CheckpointError(ValueError):
    """A checkpoint that cannot be used (missing, or weights that do not fit the model), or a run
    that would overwrite another run's checkpoints."""


def load_checkpoint(ckpt_path: str | Path) -> dict:
    """Load a checkpoint's tensors and plain values; anything else is refused, as Lightning does
    with ``weights_only: true``, since unpickling arbitrary objects can run arbitrary code."""
    try:
        return torch.load(ckpt_path, map_location="cpu", weights_only=True, mmap=True)
    except Exception as error:  # torch raises several types for corrupt or unsafe files
        first_line = str(error).strip().splitlines()[0]
        raise CheckpointError(
            f"Cannot load checkpoint '{ckpt_path}' as weights only: {first_line}"
        ) from None


def check_checkpoint_fits(model: torch.nn.Module, ckpt_path: str | Path) -> dict:
    """Raise ``CheckpointError`` naming every key or shape that differs; return the checkpoint."""
    checkpoint = load_checkpoint(ckpt_path)
    if "state_dict" not in checkpoint:
        raise CheckpointError(
            f"Checkpoint '{ckpt_path}' is not one that train.py wrote: it has no 'state_dict' "
            f"(its first keys: {', '.join(map(str, list(checkpoint)[:5]))}). Give a best.ckpt "
            "or last.ckpt."
        )
    saved = checkpoint["state_dict"]
    expected = model.state_dict()
    problems = [f"missing {key} {tuple(expected[key].shape)}" for key in expected.keys() - saved]
    problems += [f"unexpected {key} {tuple(saved[key].shape)}" for key in saved.keys() - expected]
    problems += [
        f"{key} is {tuple(saved[key].shape)} in the checkpoint, {tuple(tensor.shape)} in the model"
        for key, tensor in expected.items()
        if key in saved and saved[key].shape != tensor.shape
    ]
    if problems:
        raise CheckpointError(
            f"Checkpoint '{ckpt_path}' does not fit the configured model: "
            f"{'; '.join(sorted(problems))}. Use the config the checkpoint was trained with "
            "(its run folder holds config.yaml)."
        )
    return checkpoint
