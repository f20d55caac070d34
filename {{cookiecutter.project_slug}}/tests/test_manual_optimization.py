"""The hand-written optimization loop does what Lightning's automatic loop does.

The same seed and config, with gradient accumulation and clipping on, must give the same weights
through ``train.py`` (manual optimization) as through Lightning's own loop (the reference below).
"""

import lightning as L
import pytest
import torch

from {{ cookiecutter.package_name }}.datamodule import ClassificationDataModule
from {{ cookiecutter.package_name }}.module import Classifier
from {{ cookiecutter.package_name }}.non_finite import NonFiniteGuard
from {{ cookiecutter.package_name }}.reproducibility import ExactResume

from .conftest import run_folders, train

EPOCHS, ACCUMULATE, CLIP = 2, 3, 0.5  # 20 batches an epoch: the last window is a partial one


class AutomaticClassifier(Classifier):
    """The same model, trained by Lightning's automatic optimization."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.automatic_optimization = True

    def training_step(self, batch, batch_idx):
        loss, _, _ = self.model_step(batch)
        return loss

    def on_train_epoch_end(self) -> None:
        pass  # Lightning steps the scheduler itself


@pytest.mark.slow
def test_manual_loop_gives_the_weights_of_lightnings_automatic_loop(tmp_path):
    train(
        "fit",
        "--config=configs/default.yaml",
        f"--trainer.default_root_dir={tmp_path}",
        f"--trainer.max_epochs={EPOCHS}",
        f"--model.scheduler.init_args.T_max={EPOCHS}",
        f"--model.accumulate_grad_batches={ACCUMULATE}",
        f"--model.gradient_clip_val={CLIP}",
        "--test_after_fit=false",
    )
    [run] = run_folders(tmp_path)
    manual = torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]

    L.seed_everything(42)  # the default config's seed, set before anything is built, as in the CLI
    data = ClassificationDataModule()
    model = AutomaticClassifier(
        num_features=data.num_features,
        num_classes=data.num_classes,
        optimizer=lambda params: torch.optim.AdamW(params, lr=0.003, weight_decay=0.01),
        scheduler=lambda optimizer: torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, EPOCHS),
    )
    trainer = L.Trainer(
        max_epochs=EPOCHS,
        accumulate_grad_batches=ACCUMULATE,
        gradient_clip_val=CLIP,
        deterministic=True,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        callbacks=[ExactResume(), NonFiniteGuard()],
    )
    trainer.fit(model, datamodule=data)

    automatic = model.state_dict()
    difference = max((manual[k] - automatic[k]).abs().max().item() for k in automatic)
    assert difference <= 1e-6
