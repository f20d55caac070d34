"""Command line: builds the data module, the model and the Trainer from YAML configs.

``python train.py fit --config configs/default.yaml`` trains; ``validate``, ``test`` and
``predict`` evaluate or apply a checkpoint given with ``--ckpt_path``. Every value can be set in
YAML or on the command line (``--model.hidden_dim=256``); ``--print_config`` shows them all.
"""

import json
import sys
from pathlib import Path

import torch
from lightning.pytorch import LightningModule, Trainer
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.cli import LightningArgumentParser, LightningCLI, SaveConfigCallback

from {{ cookiecutter.package_name }}.datamodule import ClassificationDataModule, DataFileError
from {{ cookiecutter.package_name }}.module import Classifier


def run_directory(trainer: Trainer) -> Path:
    """The folder of this run: ``<save_dir>/<logger name>/<version>``, where its checkpoints go."""
    logger = trainer.logger
    if logger is None:
        return Path(trainer.default_root_dir)
    version = logger.version if isinstance(logger.version, str) else f"version_{logger.version}"
    return Path(logger.save_dir or trainer.default_root_dir) / str(logger.name) / version


class SaveConfigToRunDirectory(SaveConfigCallback):
    """Saves the fully resolved config as ``config.yaml`` in the run's own folder.

    Lightning's default writes to ``trainer.log_dir``, which for W&B is shared by every run, so
    the second run stopped on "config.yaml already exists". Every run here has its own folder.
    """

    def setup(self, trainer: Trainer, pl_module: LightningModule, stage: str) -> None:
        if self.already_saved:
            return
        run_dir = trainer.strategy.broadcast(run_directory(trainer))
        if trainer.is_global_zero:
            run_dir.mkdir(parents=True, exist_ok=True)
            self.parser.save(
                self.config, run_dir / self.config_filename, skip_none=False, overwrite=True
            )
        self.already_saved = True


class TrainCLI(LightningCLI):
    """LightningCLI with the project's links, checkpointing and fit-then-test."""

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        # The data decides the model's input and output sizes: one source of truth.
        parser.link_arguments("data.num_features", "model.num_features", apply_on="instantiate")
        parser.link_arguments("data.num_classes", "model.num_classes", apply_on="instantiate")
        # Logs and checkpoints follow --trainer.default_root_dir.
        parser.link_arguments("trainer.default_root_dir", "trainer.logger.init_args.save_dir")
        # Always on, configured under `checkpoint:` in the YAML.
        parser.add_lightning_class_args(ModelCheckpoint, "checkpoint")
        parser.add_argument(
            "--test_after_fit",
            type=bool,
            default=True,
            help="After `fit`, score the best checkpoint on the test set (fit only).",
        )

    def _parse_ckpt_path(self) -> None:
        """Report, never apply, hyperparameters of a ``--ckpt_path`` that differ from the config.

        Lightning's own version merges the checkpoint's values into the config, so that old values
        silently win over the YAML (Lightning issues #20801, #21262). Here the config decides.
        """
        subcommand = self.config.get("subcommand")
        ckpt_path = self.config[subcommand].get("ckpt_path") if subcommand else None
        if not ckpt_path or not Path(ckpt_path).is_file():
            return
        checkpoint = torch.load(ckpt_path, map_location="cpu", weights_only=True, mmap=True)
        model_config = self.config[subcommand].model
        for key, saved in checkpoint.get("hyper_parameters", {}).items():
            if key in model_config and model_config[key] != saved:
                print(
                    f"Note: {ckpt_path} was trained with model.{key}={saved!r}; the config's "
                    f"model.{key}={model_config[key]!r} is used.",
                    file=sys.stderr,
                )

    def after_fit(self) -> None:
        if not self.config.fit.test_after_fit or self.trainer.fast_dev_run:
            return
        checkpoint = self.trainer.checkpoint_callback
        best = checkpoint.best_model_path if checkpoint is not None else ""
        self.trainer.test(self.model, datamodule=self.datamodule, ckpt_path=best or None)
        self.save_metrics("test")

    def after_validate(self) -> None:
        self.save_metrics("validate")

    def after_test(self) -> None:
        self.save_metrics("test")

    def after_predict(self) -> None:
        """Write the predicted classes, one per line, to ``predictions.csv`` in the run folder."""
        predictions = torch.cat(self.trainer.predict_loop.predictions).tolist()
        if self.trainer.is_global_zero:
            lines = ["prediction", *map(str, predictions)]
            (run_directory(self.trainer) / "predictions.csv").write_text("\n".join(lines) + "\n")

    def save_metrics(self, stage: str) -> None:
        """Write the final metrics to ``<stage>_metrics.json`` in the run folder, for scripts."""
        metrics = {name: value.item() for name, value in self.trainer.callback_metrics.items()}
        if self.trainer.is_global_zero:
            path = run_directory(self.trainer) / f"{stage}_metrics.json"
            path.write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")


def main(args: list[str] | None = None) -> None:
    """Run the command line; bad data files end with their message, not a traceback."""
    try:
        TrainCLI(
            Classifier,
            ClassificationDataModule,
            save_config_callback=SaveConfigToRunDirectory,
            save_config_kwargs={"overwrite": True},
            args=args,
        )
    except DataFileError as error:
        sys.exit(f"error: {error}")
