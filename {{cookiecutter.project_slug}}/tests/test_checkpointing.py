"""Checkpoint files are replaced whole or not at all; files that cannot be used are named."""

import pytest
import torch
from lightning.pytorch.plugins.io import AsyncCheckpointIO

from {{ cookiecutter.package_name }}.checkpointing import (
    AtomicCheckpointIO,
    CheckpointError,
    check_checkpoint_fits,
)
from {{ cookiecutter.package_name }}.cli import check_resumable


def test_a_failed_write_leaves_the_previous_checkpoint_intact(tmp_path, monkeypatch):
    path = tmp_path / "checkpoints" / "last.ckpt"
    AtomicCheckpointIO().save_checkpoint({"step": torch.tensor(1)}, path)

    def write_half_then_fail(obj, file):
        file.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", write_half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        AtomicCheckpointIO().save_checkpoint({"step": torch.tensor(2)}, path)
    monkeypatch.undo()

    assert torch.load(path, weights_only=True)["step"].item() == 1
    assert [p.name for p in path.parent.iterdir()] == ["last.ckpt"]  # no partial file left


def test_the_background_writer_saves_a_snapshot_and_reports_a_failed_write(tmp_path, monkeypatch):
    """configs/default.yaml writes checkpoints from a thread: what is saved is the state at the
    save, the run waits for the write at its end, and a failed write is raised, not lost."""
    path = tmp_path / "last.ckpt"
    writer = AsyncCheckpointIO(AtomicCheckpointIO())
    weights = torch.ones(3)
    writer.save_checkpoint({"weights": weights}, path)
    weights.add_(1)  # training goes on while the file is written
    writer.teardown()  # Lightning calls it when fit ends, also after an error or a signal
    assert torch.load(path, weights_only=True)["weights"].tolist() == [1.0, 1.0, 1.0]

    def fail(obj, file):
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", fail)
    with pytest.raises(OSError, match="disk full"):  # from the next save, or at the end at last
        writer.save_checkpoint({"weights": weights}, path)
        writer.teardown()
    monkeypatch.undo()
    assert torch.load(path, weights_only=True)["weights"].tolist() == [1.0, 1.0, 1.0]


def test_a_file_that_is_not_a_lightning_checkpoint_is_refused_by_name(tmp_path):
    path = tmp_path / "weights.pt"
    torch.save(torch.nn.Linear(2, 1).state_dict(), path)  # a plain state_dict
    with pytest.raises(CheckpointError, match=f"'{path}' is not one that train.py wrote"):
        check_checkpoint_fits(torch.nn.Linear(2, 1), path)


@pytest.mark.parametrize(("max_epochs", "refused"), [(2, True), (3, True), (4, False), (-1, False)])
def test_resuming_is_refused_when_max_epochs_leaves_nothing_to_train(max_epochs, refused):
    checkpoint = {"optimizer_states": [{}], "epoch": 3}  # saved at the end of the fourth epoch
    if not refused:
        check_resumable("last.ckpt", checkpoint, max_epochs)
        return
    with pytest.raises(CheckpointError, match=f"trainer.max_epochs={max_epochs} leaves nothing"):
        check_resumable("last.ckpt", checkpoint, max_epochs)
