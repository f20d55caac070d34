"""Training logic: how the network is trained, evaluated and used for prediction."""

import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.cli import LRSchedulerCallable, OptimizerCallable
from torch import Tensor
from torchmetrics import MaxMetric, MeanMetric
from torchmetrics.classification import MulticlassAccuracy

from {{ cookiecutter.package_name }}.network import MLP


class Classifier(L.LightningModule):
    """Trains the MLP with cross-entropy and reports loss and accuracy for every stage.

    Args:
        num_features: Input size, linked from the data module by the CLI.
        num_classes: Number of classes, linked from the data module by the CLI.
        hidden_dim: Width of the hidden layers.
        dropout: Dropout probability after each hidden layer.
        compile: Compile the network with ``torch.compile`` (in place, so checkpoints keep their
            keys). The first steps pay the compile time; see the README for the figures.
        optimizer: Builds the optimizer from the parameters; chosen in the config.
        scheduler: Builds the learning-rate scheduler, stepped once per epoch; optional.
{%- if cookiecutter.optimization == "manual" %}
        accumulate_grad_batches: Batches whose gradients are summed before one optimizer step.
        gradient_clip_val: Largest allowed gradient norm (over all parameters); ``None`` disables.
{%- endif %}
    """

    def __init__(
        self,
        num_features: int,
        num_classes: int,
        hidden_dim: int = 1024,
        dropout: float = 0.1,
        compile: bool = False,
        optimizer: OptimizerCallable = torch.optim.AdamW,
        scheduler: LRSchedulerCallable | None = None,
{%- if cookiecutter.optimization == "manual" %}
        accumulate_grad_batches: int = 1,
        gradient_clip_val: float | None = None,
{%- endif %}
    ) -> None:
        super().__init__()
{%- if cookiecutter.optimization == "manual" %}
        if accumulate_grad_batches < 1:
            raise ValueError(
                f"model.accumulate_grad_batches must be >= 1, not {accumulate_grad_batches}"
            )
        # training_step calls backward() and step() itself; Lightning only runs the loop.
        self.automatic_optimization = False
{%- endif %}
        # The callables are code, not data: kept out of the checkpoint's hyperparameters.
        self.save_hyperparameters(ignore=["optimizer", "scheduler"])
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.net = MLP(num_features, num_classes, hidden_dim, dropout)
        if compile:
            self.net.compile()  # compiled at its first call
        # One metric object per stage, so their states never mix. Under DDP, compute() combines
        # the states of all processes. The loss means pass a NaN through: no check, no sync.
        # They are given a batch's loss once per sample, so a smaller last batch counts less
        # (not `weight=`: torchmetrics 1.9 drops it with nan_strategy="disable", its issue 3434).
        self.train_loss = MeanMetric(nan_strategy="disable")
        self.train_acc = MulticlassAccuracy(num_classes, average="micro")
        self.val_loss = MeanMetric(nan_strategy="disable")
        self.val_acc = MulticlassAccuracy(num_classes, average="micro")
        self.test_loss = MeanMetric(nan_strategy="disable")
        self.test_acc = MulticlassAccuracy(num_classes, average="micro")
        self.val_acc_best = MaxMetric()
        self.val_acc_best.persistent(True)  # kept in checkpoints: a resumed run remembers its best

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)  # (batch, num_classes) logits

    def model_step(self, batch: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor, Tensor]:
        """The computation shared by every stage: loss, predicted and true labels."""
        x, y = batch
        logits = self(x)  # (batch, num_classes)
        loss = F.cross_entropy(logits, y)
        return loss, logits.argmax(dim=1), y
{% if cookiecutter.optimization == "automatic" %}
    def training_step(self, batch: tuple[Tensor, Tensor], batch_idx: int) -> Tensor:
        loss, preds, y = self.model_step(batch)
        self.log_training_step(loss, preds, y)
        # Lightning runs backward, clipping, accumulation and step, set by the Trainer's flags.
        return loss
{%- else %}
    def training_step(self, batch: tuple[Tensor, Tensor], batch_idx: int) -> Tensor:
        optimizer = self.optimizers()
        accumulate = self.hparams.accumulate_grad_batches
        loss, preds, y = self.model_step(batch)
        # Scale so that the gradients summed over the window average like one large batch.
        self.manual_backward(loss / accumulate)
        # Step at the end of each window, and at the end of the epoch for a partial window.
        if (batch_idx + 1) % accumulate == 0 or self.trainer.is_last_batch:
            if self.hparams.gradient_clip_val is not None:
                self.clip_gradients(
                    optimizer,
                    gradient_clip_val=self.hparams.gradient_clip_val,
                    gradient_clip_algorithm="norm",
                )
            optimizer.step()
            optimizer.zero_grad()
        self.log_training_step(loss, preds, y)
        return loss
{%- endif %}

    def log_training_step(self, loss: Tensor, preds: Tensor, y: Tensor) -> None:
        """Accumulate the epoch's training metrics; log the step's loss on logging steps only.

        Each ``self.log`` call costs Lightning 0.5-0.9 ms of bookkeeping on this project's CPU
        (3-5% of a step): the step's loss is logged only when Lightning hands values to the logger,
        every ``trainer.log_every_n_steps`` steps or every step under ``fast_dev_run``. Lightning's
        own LearningRateMonitor asks the same (private) question. The epoch's mean loss and
        accuracy count every sample.
        """
        self.train_loss.update(loss.expand(len(y)))
        self.train_acc.update(preds, y)
        if self.trainer._logger_connector.should_update_logs or self.trainer.fast_dev_run:
            self.log("train/loss", loss, prog_bar=True)

    def on_train_epoch_end(self) -> None:
        loss, acc = self.train_loss.compute(), self.train_acc.compute()  # over all processes
        self.log_dict({"train/loss_epoch": loss, "train/acc": acc})
        self.train_loss.reset()
        self.train_acc.reset()
{%- if cookiecutter.optimization == "manual" %}
        # In manual optimization Lightning steps no scheduler: one step per epoch, by hand.
        scheduler = self.lr_schedulers()
        if scheduler is not None:
            scheduler.step()
{%- endif %}

    def validation_step(self, batch: tuple[Tensor, Tensor], batch_idx: int) -> None:
        loss, preds, y = self.model_step(batch)
        # Accumulated only, and logged once at the epoch's end: each self.log call costs Lightning
        # more bookkeeping than these updates (see log_training_step).
        self.val_loss.update(loss.expand(len(y)))
        self.val_acc.update(preds, y)

    def on_validation_epoch_end(self) -> None:
        val_acc = self.val_acc.compute()
        self.log_dict({"val/loss": self.val_loss.compute(), "val/acc": val_acc}, prog_bar=True)
        self.val_loss.reset()
        self.val_acc.reset()
        if self.trainer.sanity_checking:  # two batches before training: not a result
            return
        self.val_acc_best(val_acc)
        self.log("val/acc_best", self.val_acc_best.compute())

    def test_step(self, batch: tuple[Tensor, Tensor], batch_idx: int) -> None:
        loss, preds, y = self.model_step(batch)
        self.test_loss.update(loss.expand(len(y)))
        self.test_acc.update(preds, y)

    def on_test_epoch_end(self) -> None:
        self.log_dict({"test/loss": self.test_loss.compute(), "test/acc": self.test_acc.compute()})
        self.test_loss.reset()
        self.test_acc.reset()

    def predict_step(self, batch: tuple[Tensor, ...], batch_idx: int) -> Tensor:
        x = batch[0]  # labels, if the batch has them, are not used
        return self(x).argmax(dim=1)  # (batch,) predicted classes

    def configure_optimizers(self) -> dict:
        optimizer = self.optimizer(self.parameters())
        if self.scheduler is None:
            return {"optimizer": optimizer}
        scheduler = self.scheduler(optimizer)
        lr_scheduler = {"scheduler": scheduler, "interval": "epoch"}
        return {"optimizer": optimizer, "lr_scheduler": lr_scheduler}
