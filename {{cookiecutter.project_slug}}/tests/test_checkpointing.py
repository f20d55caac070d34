"""Checkpoint files are replaced whole or not at all; files that cannot be used are named."""

import pytest
import torch
from jsonargparse import Namespace
from lightning.pytorch.plugins.io import AsyncCheckpointIO
from lightning.pytorch.utilities import rank_zero_only

from {{ cookiecutter.package_name }}.checkpointing import (
    AtomicCheckpointIO,
    CheckpointError,
    check_checkpoint_fits,
)
from {{ cookiecutter.package_name }}.cli import (
    check_no_run_is_overwritten,
    check_resumable,
    report_changed_hyperparameters,
    report_restored_optimizer_settings,
)


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


def test_resuming_names_every_setting_that_differs_from_the_checkpoint(capsys):
    """The config decides the model and data; the optimizer and scheduler continue as saved."""
    checkpoint = {
        "hyper_parameters": {"hidden_dim": 1024, "dropout": 0.1},
        "datamodule_hyper_parameters": {"split_seed": 0, "batch_size": 64},
        "optimizer_states": [
            {"param_groups": [{"lr": 0.002, "initial_lr": 0.003, "betas": (0.9, 0.999)}]}
        ],
        "lr_schedulers": [{"T_max": 20, "last_epoch": 4}],
    }
    config = Namespace(
        ckpt_path="last.ckpt",
        model=Namespace(
            hidden_dim=1024,
            dropout=0.2,
            optimizer=Namespace(init_args=Namespace(lr=0.1, betas=[0.9, 0.999])),
            scheduler=Namespace(init_args=Namespace(T_max=40, last_epoch=-1)),
        ),
        data=Namespace(split_seed=7, batch_size=64),
    )
    report_changed_hyperparameters(config, checkpoint)
    report_restored_optimizer_settings(config, checkpoint)
    notes = capsys.readouterr().err.splitlines()
    assert [note.split(";")[0] for note in notes[:2]] == [
        "Note: last.ckpt was trained with model.dropout=0.1",
        "Note: last.ckpt was trained with data.split_seed=0",
    ]
    assert [note.split(" is not used")[0] for note in notes[2:]] == [
        "Note: the config's model.optimizer.init_args.lr=0.1",  # against initial_lr, not lr
        "Note: the config's model.scheduler.init_args.T_max=40",
    ]
    assert "with T_max=20" in notes[3]


def test_a_run_without_a_logger_does_not_replace_another_runs_checkpoints(tmp_path, monkeypatch):
    config = Namespace(trainer=Namespace(logger=False, default_root_dir=str(tmp_path)))
    check_no_run_is_overwritten(config)  # an empty folder: the run may start
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "last.ckpt").write_bytes(b"another run's")
    with pytest.raises(CheckpointError, match=f"'{tmp_path}', which holds another run's"):
        check_no_run_is_overwritten(config)
    # DDP: process 0 checked before starting the others, which may already see its own files.
    monkeypatch.setattr(rank_zero_only, "rank", 1)
    check_no_run_is_overwritten(config)
    config.trainer.logger = Namespace(class_path="lightning.pytorch.loggers.CSVLogger")
    check_no_run_is_overwritten(config)  # a logger gives each run its own folder
