"""The reliability guarantees, checked through ``train.py`` as a user runs it.

Same seed, same weights; a resumed run ends with the weights of the run it continues, whether it
stopped at an epoch's end or was stopped by SIGTERM or Ctrl-C in the middle of one; a NaN stops
the run and spares the good checkpoints; a checkpoint that cannot be loaded safely, or does not
fit the model, is refused with a message. All compare weights bit for bit on one machine.
"""

import signal
import time
from pathlib import Path

import pytest
import torch

from .conftest import last_checkpoint, max_weight_difference, run_folders, train

pytestmark = pytest.mark.slow

EPOCHS = 3  # of 20 steps each with the default batch size
RUN = [
    "fit",
    "--config=configs/default.yaml",
    f"--trainer.max_epochs={EPOCHS}",
    f"--model.scheduler.init_args.T_max={EPOCHS}",  # the schedule's horizon: part of the job
    "--test_after_fit=false",
    "--trainer.enable_progress_bar=false",
    "--trainer.enable_model_summary=false",
]


def fit(root: Path, *args: str, check: bool = True):
    return train(*RUN, f"--trainer.default_root_dir={root}", *args, check=check)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Path:
    """``last.ckpt`` of the run every other run here is compared with."""
    root = tmp_path_factory.mktemp("uninterrupted")
    fit(root)
    return last_checkpoint(root)


def test_same_seed_gives_the_same_weights_another_seed_does_not(uninterrupted, tmp_path):
    fit(tmp_path / "same")
    assert max_weight_difference(uninterrupted, last_checkpoint(tmp_path / "same")) == 0.0
    fit(tmp_path / "other", "--seed_everything=7")
    assert max_weight_difference(uninterrupted, last_checkpoint(tmp_path / "other")) > 1e-3


def test_resume_at_an_epoch_end_gives_the_same_weights(uninterrupted, tmp_path):
    fit(tmp_path, "--trainer.max_epochs=1")
    fit(tmp_path, "--ckpt_path=last")
    resumed = last_checkpoint(tmp_path)
    assert torch.load(resumed, weights_only=True)["epoch"] == EPOCHS - 1
    assert max_weight_difference(uninterrupted, resumed) == 0.0


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT"])
def test_signal_mid_epoch_saves_and_the_resumed_run_is_exact(uninterrupted, tmp_path, signal_name):
    stop_config = tmp_path / "stop.yaml"
    stop_config.write_text(
        "trainer:\n  callbacks:\n    - class_path: tests.signal_at_step.SignalAtStep\n"
        f"      init_args:\n        step: 30\n        signal_name: {signal_name}\n"
    )
    stopped = fit(tmp_path / "runs", f"--config={stop_config}", check=False)
    exited_at = time.time()

    assert stopped.returncode == 128 + signal.Signals[signal_name]
    assert "Traceback" not in stopped.stderr
    assert f"Stopped by {signal_name} at epoch 1, step 30" in stopped.stdout + stopped.stderr
    sent_at = float(stopped.stdout.split("signal sent at ")[1].split()[0])
    assert exited_at - sent_at < 10  # seconds, interpreter shutdown included
    checkpoint = torch.load(last_checkpoint(tmp_path / "runs"), weights_only=True)
    progress = checkpoint["loops"]["fit_loop"]["epoch_loop.batch_progress"]["current"]
    assert (checkpoint["epoch"], checkpoint["global_step"], progress["completed"]) == (1, 30, 10)

    fit(tmp_path / "runs", "--ckpt_path=last")
    assert max_weight_difference(uninterrupted, last_checkpoint(tmp_path / "runs")) == 0.0


def test_non_finite_loss_stops_the_run_and_keeps_the_good_checkpoints(tmp_path):
    # The learning rate jumps by 1e30 after the first epoch: the loss overflows in the second.
    result = fit(
        tmp_path,
        "--model.scheduler.class_path=torch.optim.lr_scheduler.StepLR",
        "--model.scheduler.init_args.step_size=1",
        "--model.scheduler.init_args.gamma=1e30",
        check=False,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "error: Training stopped at epoch 1, batch 1, optimizer step 21: the loss is nan" in (
        result.stderr
    )
    [run] = run_folders(tmp_path)
    for name in ["best.ckpt", "last.ckpt"]:  # written after the first, good epoch
        checkpoint = torch.load(run / "checkpoints" / name, weights_only=True)
        assert checkpoint["epoch"] == 0
        assert all(torch.isfinite(t).all() for t in checkpoint["state_dict"].values())


def test_non_finite_policy_skip_skips_and_counts_the_steps(tmp_path):
    result = fit(
        tmp_path,
        "--trainer.max_epochs=1",
        "--model.optimizer.init_args.lr=1e30",  # diverges after the first step
        "--non_finite.policy=skip",
    )
    skipped = (result.stdout + result.stderr).count("Skipped the optimizer step")
    assert skipped >= 10
    checkpoint = torch.load(last_checkpoint(tmp_path), weights_only=True)
    assert checkpoint["callbacks"]["NonFiniteGuard"]["skipped_steps"] == skipped
    assert all(torch.isfinite(t).all() for t in checkpoint["state_dict"].values())


def test_checkpoint_of_another_model_shape_is_refused_naming_the_shapes(uninterrupted, tmp_path):
    result = train(
        "validate",
        "--config=configs/default.yaml",
        f"--trainer.default_root_dir={tmp_path}",
        "--model.hidden_dim=32",
        f"--ckpt_path={uninterrupted}",
        check=False,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "does not fit the configured model" in result.stderr
    assert "net.layers.1.weight is (1024, 64) in the checkpoint, (32, 64) in the model" in (
        result.stderr
    )


def test_checkpoint_holding_code_is_refused(uninterrupted, tmp_path):
    checkpoint = torch.load(uninterrupted, weights_only=True)
    checkpoint["note"] = Path("unpickling this needs code: a Path object")
    unsafe = tmp_path / "unsafe.ckpt"
    torch.save(checkpoint, unsafe)
    result = train(
        "test",
        "--config=configs/default.yaml",
        f"--trainer.default_root_dir={tmp_path}",
        f"--ckpt_path={unsafe}",
        check=False,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"Cannot load checkpoint '{unsafe}' as weights only" in result.stderr
