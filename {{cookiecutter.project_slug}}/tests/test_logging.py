"""What training logs: the step's loss on the logger's steps, the epoch's mean over every batch."""

import lightning as L
import pytest
import torch
from lightning.pytorch.loggers import Logger

from {{ cookiecutter.package_name }}.datamodule import ClassificationDataModule
from {{ cookiecutter.package_name }}.module import Classifier


class RecordingLogger(Logger):
    name, version = "recording", 0

    def __init__(self) -> None:
        super().__init__()
        self.logged: list[tuple[int, dict]] = []

    def log_hyperparams(self, params, *args, **kwargs) -> None:
        pass

    def log_metrics(self, metrics: dict, step: int) -> None:
        self.logged.append((step, dict(metrics)))


class LossRecordingClassifier(Classifier):
    """Keeps every batch's loss, to compare with what reached the logger."""

    def training_step(self, batch, batch_idx):
        loss = super().training_step(batch, batch_idx)
        self.losses.append(loss.item())
        return loss


def test_step_loss_is_logged_on_logging_steps_and_the_epoch_mean_counts_every_batch():
    L.seed_everything(0)
    data = ClassificationDataModule()
    model = LossRecordingClassifier(num_features=64, num_classes=10, hidden_dim=16)
    model.losses = []
    logger = RecordingLogger()
    trainer = L.Trainer(
        max_epochs=2,
        limit_train_batches=7,
        limit_val_batches=0,
        log_every_n_steps=3,
        logger=logger,
        accelerator="cpu",
        devices=1,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, datamodule=data)

    step_losses = {step: m["train/loss"] for step, m in logger.logged if "train/loss" in m}
    assert list(step_losses) == [2, 5, 8, 11]  # batches 3, 6, 9, 12 of 14: every third
    assert list(step_losses.values()) == pytest.approx([model.losses[i] for i in (2, 5, 8, 11)])
    epoch_means = [m["train/loss_epoch"] for _, m in logger.logged if "train/loss_epoch" in m]
    mean = torch.tensor(model.losses).view(2, 7).mean(dim=1)  # 7 full batches an epoch
    assert epoch_means == pytest.approx(mean.tolist())
    assert trainer.progress_bar_metrics["train/loss"] == pytest.approx(model.losses[11])
