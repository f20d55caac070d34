"""Checkpoint files are replaced whole or not at all."""

import pytest
import torch

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
