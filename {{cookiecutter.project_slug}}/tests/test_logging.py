"""What training logs: the step's loss on the logger's steps, the epoch's mean over every sample,
and the run's full config."""

import lightning as L
import pytest
import torch

from {{ cookiecutter.package_name }}.cli import create_cli
from {{ cookiecutter.package_name }}.datamodule import ClassificationDataModule
from {{ cookiecutter.package_name }}.module import Classifier

from .conftest import FAST, PROJECT_ROOT, RecordingLogger


class LossRecordingClassifier(Classifier):
    """Keeps every batch's loss and size, to compare with what reached the logger."""

    def __init__(self) -> None:
        super().__init__(num_features=64, num_classes=10, hidden_dim=16)
        self.batches: dict[str, list[tuple[float, int]]] = {"train": [], "val": []}

    def model_step(self, batch):
        loss, preds, y = super().model_step(batch)
        self.batches["train" if self.training else "val"].append((loss.item(), len(y)))
        return loss, preds, y


def epoch_means(batches: list[tuple[float, int]], epochs: int) -> list[float]:
    """Each epoch's mean loss over its samples: a batch counts as often as it has samples."""
    loss, size = torch.tensor(batches, dtype=torch.float64).view(epochs, -1, 2).unbind(dim=-1)
    return ((loss * size).sum(dim=1) / size.sum(dim=1)).tolist()


def test_step_loss_is_logged_on_logging_steps_and_epoch_means_count_every_sample():
    L.seed_everything(0)
    data = ClassificationDataModule(batch_size=100)  # each epoch ends with a smaller batch
    model = LossRecordingClassifier()
    logger = RecordingLogger()
    trainer = L.Trainer(
        max_epochs=2,
        log_every_n_steps=3,
        num_sanity_val_steps=0,
        logger=logger,
        accelerator="cpu",
        devices=1,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, datamodule=data)

    train, val = model.batches["train"], model.batches["val"]
    assert train[-1][1] < train[0][1] and val[-1][1] < val[0][1]  # the uneven case is tested
    steps = len(train)
    logged_steps = [step for step in range(steps) if (step + 1) % 3 == 0]  # every third batch
    step_losses = {step: m["train/loss"] for step, m in logger.logged if "train/loss" in m}
    assert list(step_losses) == logged_steps
    assert list(step_losses.values()) == pytest.approx([train[s][0] for s in logged_steps])
    assert trainer.progress_bar_metrics["train/loss"] == pytest.approx(train[logged_steps[-1]][0])
    train_means = [m["train/loss_epoch"] for _, m in logger.logged if "train/loss_epoch" in m]
    assert train_means == pytest.approx(epoch_means(train, epochs=2))
    val_means = [m["val/loss"] for _, m in logger.logged if "val/loss" in m]
    assert val_means == pytest.approx(epoch_means(val, epochs=2))


def test_fast_dev_run_logs_the_step_loss():
    model = LossRecordingClassifier()
    trainer = L.Trainer(
        fast_dev_run=True,
        log_every_n_steps=10,
        accelerator="cpu",
        devices=1,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, datamodule=ClassificationDataModule())
    assert trainer.progress_bar_metrics["train/loss"] == pytest.approx(model.batches["train"][0][0])


def test_the_logger_gets_the_full_config_of_the_run(tmp_path):
    config = PROJECT_ROOT / "configs" / "default.yaml"
    args = [f"--config={config}", f"--trainer.default_root_dir={tmp_path}", *FAST]
    cli = create_cli(args, run=False)
    logger = RecordingLogger()
    cli.trainer.loggers = [logger]
    cli.trainer.fit(cli.model, datamodule=cli.datamodule)
    logged = logger.hyperparams
    assert logged["seed_everything"] == 42
    assert logged["trainer"]["max_epochs"] == 1
    assert logged["model"]["optimizer"]["init_args"]["lr"] == 0.003
    assert logged["model"]["scheduler"]["init_args"]["T_max"] == 20
    assert logged["hidden_dim"] == 1024  # and Lightning's own: the model's hyperparameters
