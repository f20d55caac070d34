"""Command line: builds the data module, the model and the Trainer from YAML configs.

``python train.py fit --config configs/default.yaml`` trains; ``validate``, ``test`` and
``predict`` evaluate or apply a checkpoint given with ``--ckpt_path``. Every value can be set in
YAML or on the command line (``--model.hidden_dim=256``); ``--print_config`` shows them all.
``fit --ckpt_path=last`` (or a path) continues a run in its own run folder.
"""

import itertools
import json
import sys
from pathlib import Path

import torch
from jsonargparse import Namespace
from lightning.pytorch import LightningModule, Trainer
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.cli import LightningArgumentParser, LightningCLI, SaveConfigCallback
from lightning.pytorch.utilities import rank_zero_info, rank_zero_only

from {{ cookiecutter.package_name }}.checkpointing import (
    CheckpointError,
    StopOnSignal,
    check_checkpoint_fits,
    load_checkpoint,
)
from {{ cookiecutter.package_name }}.datamodule import ClassificationDataModule, DataFileError
from {{ cookiecutter.package_name }}.module import Classifier
from {{ cookiecutter.package_name }}.non_finite import NonFiniteError, NonFiniteGuard
from {{ cookiecutter.package_name }}.reproducibility import ExactResume
from {{ cookiecutter.package_name }}.throughput import ThroughputLogger


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
    the second run stopped on "config.yaml already exists". Every run here has its own folder,
    and a profiler report (configs/profile.yaml) goes there too, for the same reason. The logger
    gets the same config (W&B's run config; hparams.yaml for CSV and TensorBoard), beside the
    model's and data's hyperparameters that Lightning logs.
    """

    def setup(self, trainer: Trainer, pl_module: LightningModule, stage: str) -> None:
        if self.already_saved:
            return
        run_dir = trainer.strategy.broadcast(run_directory(trainer))
        if trainer.profiler.dirpath == trainer.log_dir:  # Lightning's default for its report
            trainer.profiler.dirpath = run_dir
        if trainer.is_global_zero:
            run_dir.mkdir(parents=True, exist_ok=True)
            self.parser.save(
                self.config, run_dir / self.config_filename, skip_none=False, overwrite=True
            )
            config = json.loads(self.parser.dump(self.config, format="json"))
            for logger in trainer.loggers:
                logger.log_hyperparams(config)
        self.already_saved = True


class TrainCLI(LightningCLI):
    """LightningCLI with the project's links, checkpointing, measurements and fit-then-test."""

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        # The data decides the model's input and output sizes: one source of truth.
        parser.link_arguments("data.num_features", "model.num_features", apply_on="instantiate")
        parser.link_arguments("data.num_classes", "model.num_classes", apply_on="instantiate")
        # Logs and checkpoints follow --trainer.default_root_dir.
        parser.link_arguments("trainer.default_root_dir", "trainer.logger.init_args.save_dir")
        # Always on, configured under their own names in the YAML.
        parser.add_lightning_class_args(ModelCheckpoint, "checkpoint")  # best.ckpt
        parser.add_lightning_class_args(ModelCheckpoint, "last_checkpoint")  # last.ckpt
        parser.add_lightning_class_args(NonFiniteGuard, "non_finite")
        parser.add_lightning_class_args(ThroughputLogger, "throughput")
        parser.add_argument(
            "--test_after_fit",
            type=bool,
            default=True,
            help="After `fit`, score the best checkpoint on the test set (fit only).",
        )

    def setup_parser(self, add_subcommands: bool, main_kwargs: dict, subparser_kwargs: dict):
        super().setup_parser(add_subcommands, main_kwargs, subparser_kwargs)
        if not add_subcommands:
            # run=False builds the objects without running `fit`; the configs are fit's, so
            # accept its options (ckpt_path, weights_only) there too.
            skip = {"model", "train_dataloaders", "val_dataloaders", "datamodule"}
            self.parser.add_method_arguments(Trainer, "fit", skip=skip)

    def _parse_ckpt_path(self) -> None:
        """Do not merge a checkpoint's hyperparameters into the config: see ``resolve_ckpt_path``.

        Lightning's own version lets old values silently win over the YAML (Lightning issues
        #20801, #21262). Here the config decides, and differences are reported.
        """

    def before_instantiate_classes(self) -> None:
        # Built with run=False, the CLI has no subcommand and no checkpoint to load.
        config = self.config if self.subcommand is None else self.config[self.subcommand]
        add_progress_bar(config.trainer)
        if self.subcommand == "fit" and config.ckpt_path is None:
            check_no_run_is_overwritten(config)
        if self.subcommand is None or config.ckpt_path is None:
            return
        config.ckpt_path = str(resolve_ckpt_path(config))
        checkpoint = load_checkpoint(config.ckpt_path)
        report_changed_hyperparameters(config, checkpoint)
        if self.subcommand == "fit":
            check_resumable(config.ckpt_path, checkpoint, config.trainer.max_epochs)
            report_restored_optimizer_settings(config, checkpoint)
            continue_in_run_folder(config)

    def after_instantiate_classes(self) -> None:
        if self.subcommand is None:
            return
        ckpt_path = self.config[self.subcommand].ckpt_path
        if ckpt_path is not None:
            check_checkpoint_fits(self.model, ckpt_path)
            if self.subcommand == "fit":  # only now, with the checkpoint found usable
                keep_earlier_files(run_directory(self.trainer))

    def before_fit(self) -> None:
        """State, once, what one optimizer step sees: it changes with the number of processes."""
        processes = self.trainer.world_size
        batch_size = self.datamodule.hparams.batch_size
{%- if cookiecutter.optimization == "manual" %}
        accumulate = self.model.hparams.accumulate_grad_batches
{%- else %}
        accumulate = self.trainer.accumulate_grad_batches
{%- endif %}
        effective = processes * batch_size * accumulate
        message = (
            f"Effective batch: {processes} process(es) x {batch_size} (data.batch_size) x "
            f"{accumulate} accumulated = {effective} samples per optimizer step."
        )
        learning_rate = self.config.fit.model.optimizer.init_args.get("lr")
        if learning_rate is not None and effective != batch_size:
            message += (
                f" The learning rate stays {learning_rate} as configured; the linear scaling rule "
                f"would use {learning_rate * effective / batch_size:g} for this batch."
            )
        rank_zero_info(message)

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
        per_process = [predictions]
        if self.trainer.world_size > 1:
            per_process = [None] * self.trainer.world_size
            torch.distributed.all_gather_object(per_process, predictions)
        # Under DDP process r predicted samples r, r + N, r + 2N, ...: interleave them back.
        in_order = [p for row in itertools.zip_longest(*per_process) for p in row if p is not None]
        if self.trainer.is_global_zero:
            lines = ["prediction", *map(str, in_order)]
            (run_directory(self.trainer) / "predictions.csv").write_text("\n".join(lines) + "\n")

    def save_metrics(self, stage: str) -> None:
        """Write the final metrics to ``<stage>_metrics.json`` in the run folder, for scripts."""
        metrics = {name: value.item() for name, value in self.trainer.callback_metrics.items()}
        if self.trainer.is_global_zero:
            path = run_directory(self.trainer) / f"{stage}_metrics.json"
            path.write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")


def add_progress_bar(trainer_config) -> None:
    """Redraw the progress bar every 10 batches, unless it is off or the config chooses one.

    Lightning's default (its Rich bar, where rich is installed) redraws 100 times a second from a
    thread that competes with training: 7-10% of the default CPU run (parity benchmark).
    ``enable_progress_bar: false`` also drops a bar listed in the callbacks, such as the one a
    run's saved config.yaml holds (Lightning refuses the two together).
    """
    callbacks = trainer_config.callbacks or []
    bars = [
        callback for callback in callbacks if "ProgressBar" in getattr(callback, "class_path", "")
    ]
    if trainer_config.enable_progress_bar is False:
        if bars:
            trainer_config.callbacks = [callback for callback in callbacks if callback not in bars]
        return
    if bars:
        return
    progress_bar = Namespace(
        class_path="lightning.pytorch.callbacks.TQDMProgressBar",
        init_args=Namespace(refresh_rate=10),
    )
    trainer_config.callbacks = [*callbacks, progress_bar]


def logger_run_root(config) -> Path | None:
    """``<save_dir>/<logger name>``, the folder that holds the configured logger's runs."""
    logger = config.trainer.logger
    if not logger or logger is True:
        return None
    name = logger.init_args.get("project") or logger.init_args.get("name") or ""
    return Path(config.trainer.default_root_dir) / name


def resolve_ckpt_path(config) -> Path:
    """The checkpoint file to load: ``last`` is the newest run's ``last.ckpt``."""
    if config.ckpt_path == "last":
        run_root = logger_run_root(config) or Path(config.trainer.default_root_dir)
        candidates = sorted(
            run_root.glob("**/checkpoints/last.ckpt"), key=lambda path: path.stat().st_mtime
        )
        if not candidates:
            raise CheckpointError(
                f"--ckpt_path=last: no run under '{run_root}' has a checkpoints/last.ckpt to "
                "continue from. Give the checkpoint's path instead."
            )
        return candidates[-1]
    path = Path(config.ckpt_path)
    if not path.is_file():
        raise CheckpointError(f"--ckpt_path: no checkpoint file '{path}'.")
    return path


def report_changed_hyperparameters(config, checkpoint: dict) -> None:
    """Say which model and data settings differ from those the checkpoint was trained with."""
    for section, saved_values in (
        ("model", checkpoint.get("hyper_parameters", {})),
        ("data", checkpoint.get("datamodule_hyper_parameters", {})),
    ):
        for key, saved in saved_values.items():
            if key in config[section] and not same_value(config[section][key], saved):
                print(
                    f"Note: {config.ckpt_path} was trained with {section}.{key}={saved!r}; the "
                    f"config's {section}.{key}={config[section][key]!r} is used.",
                    file=sys.stderr,
                )


def report_restored_optimizer_settings(config, checkpoint: dict) -> None:
    """Say which optimizer and scheduler settings of the config a resumed ``fit`` cannot apply.

    Lightning restores the optimizer's and the scheduler's state as saved (their settings are part
    of it), so a changed learning rate, weight decay or ``T_max`` would silently not take effect.
    """
    optimizer_states = checkpoint.get("optimizer_states") or [{}]
    scheduler_states = checkpoint.get("lr_schedulers") or [{}]
    saved_settings = {
        "optimizer": optimizer_states[0].get("param_groups", [{}])[0],  # lr, weight_decay, ...
        "scheduler": scheduler_states[0],  # T_max, eta_min, ...
    }
    for name, saved in saved_settings.items():
        configured = config.model.get(name)
        init_args = configured.init_args if configured else {}
        for key, value in init_args.items():
            if key == "last_epoch":
                continue  # the scheduler's position in the run, not a setting
            # With a scheduler, "lr" in the state is the scheduled rate; "initial_lr" the setting.
            saved_key = "initial_lr" if key == "lr" and "initial_lr" in saved else key
            if saved_key in saved and not same_value(value, saved[saved_key]):
                print(
                    f"Note: the config's model.{name}.init_args.{key}={value!r} is not used: "
                    f"the resumed run continues the {name} state saved in {config.ckpt_path}, "
                    f"with {key}={saved[saved_key]!r}. To train with new {name} settings, start "
                    "a new run.",
                    file=sys.stderr,
                )


def same_value(configured, saved) -> bool:
    """Equal, counting a list and a tuple of the same items as equal (YAML has no tuples)."""
    if isinstance(configured, list | tuple) and isinstance(saved, list | tuple):
        return list(configured) == list(saved)
    return configured == saved


def check_no_run_is_overwritten(config) -> None:
    """Without a logger, runs have no folders of their own: refuse to start one where another
    run's ``config.yaml`` and ``checkpoints/last.ckpt`` would be replaced."""
    if config.trainer.logger is not False:
        return  # each run gets <save_dir>/<name>/<version>/
    if rank_zero_only.rank > 0:
        return  # process 0 checked before it started the others, which may find its files
    folder = Path(config.trainer.default_root_dir)
    if (folder / "config.yaml").exists() or (folder / "checkpoints" / "last.ckpt").exists():
        raise CheckpointError(
            f"trainer.logger=false: the run would write straight into trainer.default_root_dir "
            f"'{folder}', which holds another run's config.yaml or checkpoints/last.ckpt. Give "
            "another --trainer.default_root_dir, or continue that run with --ckpt_path=last."
        )


def check_resumable(ckpt_path: str, checkpoint: dict, max_epochs: int | None) -> None:
    """``fit`` continues from the full training state (best.ckpt holds the weights only), and
    only while epochs are left to train."""
    if "optimizer_states" not in checkpoint:
        raise CheckpointError(
            f"--ckpt_path: '{ckpt_path}' holds the weights only (as best.ckpt does), not the "
            "optimizer and loop state that fit continues from. Continue from last.ckpt."
        )
    epoch = checkpoint.get("epoch", 0)  # counted from 0
    if max_epochs is not None and max_epochs != -1 and max_epochs <= epoch:
        raise CheckpointError(
            f"--ckpt_path: '{ckpt_path}' was saved in epoch {epoch} (counted from 0), so "
            f"trainer.max_epochs={max_epochs} leaves nothing to train: set it above {epoch}."
        )


def continue_in_run_folder(config) -> None:
    """Resume logging and checkpointing in the run folder the checkpoint came from.

    A checkpoint at ``<save_dir>/<name>/<version>/checkpoints/last.ckpt`` gives the logger that
    version (for W&B: that run id), so the run's metrics, checkpoints and config stay together.
    """
    run_folder = Path(config.ckpt_path).resolve().parents[1]
    run_root = logger_run_root(config)
    if run_root is None or run_folder.parent != run_root.resolve():
        return  # a checkpoint from elsewhere: this run gets a new folder
    init_args = config.trainer.logger.init_args
    if config.trainer.logger.class_path.endswith("WandbLogger"):
        init_args.id = run_folder.name
    else:
        init_args.version = run_folder.name


@rank_zero_only
def keep_earlier_files(run_folder: Path) -> None:
    """Rename the run's ``metrics.csv`` and ``config.yaml`` to ``metrics-1.csv``, ``config-1.yaml``
    (then ``-2``, ...) before the continued run writes its own.

    Lightning's CSVLogger deletes a ``metrics.csv`` it finds in its folder, and the continued run
    may be configured differently (``max_epochs``, say): nothing of the earlier part is lost.
    """
    for name in ("metrics.csv", "config.yaml"):
        path = run_folder / name
        if not path.is_file():
            continue
        parts = (path.with_name(f"{path.stem}-{part}{path.suffix}") for part in itertools.count(1))
        kept = path.rename(next(part for part in parts if not part.exists()))
        rank_zero_info(f"Continuing in {run_folder}: the earlier {name} is kept as {kept.name}.")


def create_cli(args: list[str] | None = None, run: bool = True) -> TrainCLI:
    """The project's command line; ``run=False`` only builds the model, data and Trainer."""
    return TrainCLI(
        Classifier,
        ClassificationDataModule,
        save_config_callback=SaveConfigToRunDirectory,
        save_config_kwargs={"overwrite": True},
        trainer_defaults={"callbacks": [StopOnSignal(), ExactResume()]},
        args=args,
        run=run,
    )


def main(args: list[str] | None = None) -> None:
    """Run the command line; a user's mistake ends with its message, not a traceback."""
    try:
        create_cli(args)
    except (DataFileError, CheckpointError, NonFiniteError) as error:
        sys.exit(f"error: {error}")
    # Lightning destroys the process group at exit for NCCL only. A Gloo group (DDP on CPU) left
    # to interpreter shutdown can abort the process (SIGABRT) after a finished run (PyTorch
    # #179291). Only after success: after an error another process may still be in a collective.
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
