"""Checkpoint files are replaced whole or not at all."""

import pytest
import torch
from lightning.pytorch.plugins.io import AsyncCheckpointIO

from {{ cookiecutter.package_name }}.checkpointing import AtomicCheckpointIO


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
