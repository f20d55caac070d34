"""Training, evaluation and prediction through ``train.py`` in subprocesses, as users run them."""

import csv
from pathlib import Path

import pytest
import torch
import yaml
from jsonargparse import Namespace

from {{ cookiecutter.package_name }}.cli import add_progress_bar

from .conftest import FAST, read_metrics, run_folders, train


@pytest.fixture(scope="module")
def default_run(tmp_path_factory) -> Path:
    """One full run of the untouched default config; returns its run folder."""
    root = tmp_path_factory.mktemp("default")
    train("fit", "--config=configs/default.yaml", f"--trainer.default_root_dir={root}")
    [run] = run_folders(root)
    return run


@pytest.mark.slow
def test_default_config_reaches_95_percent_test_accuracy(default_run: Path):
    assert read_metrics(default_run, "test")["test/acc"] >= 0.95
    best = torch.load(default_run / "checkpoints" / "best.ckpt", weights_only=True)
    last = torch.load(default_run / "checkpoints" / "last.ckpt", weights_only=True)
    assert last["epoch"] == 19  # the final epoch's state, whether or not it was the best
    assert best["global_step"] <= last["global_step"] == 20 * 20  # 20 batches an epoch
    saved_config = yaml.safe_load((default_run / "config.yaml").read_text())
    assert saved_config["trainer"]["max_epochs"] == 20
    [progress_bar] = saved_config["trainer"]["callbacks"]  # added by the CLI, redrawn less often
    assert progress_bar["class_path"].endswith("TQDMProgressBar")
    assert progress_bar["init_args"]["refresh_rate"] == 10


@pytest.mark.slow
def test_fit_from_the_weights_only_best_checkpoint_is_refused(default_run, tmp_path):
    best = default_run / "checkpoints" / "best.ckpt"
    result = train(
        "fit",
        "--config=configs/default.yaml",
        f"--trainer.default_root_dir={tmp_path}",
        f"--ckpt_path={best}",
        check=False,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "holds the weights only" in result.stderr and "Continue from last.ckpt" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("command", ["validate", "test"])
def test_evaluating_the_best_checkpoint_repeats_its_score(default_run, tmp_path, command):
    best = default_run / "checkpoints" / "best.ckpt"
    args = ["--config=configs/default.yaml", f"--trainer.default_root_dir={tmp_path}"]
    train(command, *args, f"--ckpt_path={best}")
    [run] = run_folders(tmp_path)
    metrics = read_metrics(run, command)
    if command == "validate":
        # best.ckpt holds weights only; last.ckpt has the best checkpoint callback's record.
        last = torch.load(best.with_name("last.ckpt"), weights_only=True)
        [state] = [s for k, s in last["callbacks"].items() if "'monitor': 'val/acc'" in k]
        assert metrics["val/acc"] == pytest.approx(state["best_model_score"].item())
    else:
        assert metrics["test/acc"] == pytest.approx(read_metrics(default_run, "test")["test/acc"])


@pytest.mark.slow
def test_predict_writes_one_class_per_test_sample(default_run, tmp_path):
    best = default_run / "checkpoints" / "best.ckpt"
    train(
        "predict",
        "--config=configs/default.yaml",
        f"--trainer.default_root_dir={tmp_path}",
        f"--ckpt_path={best}",
    )
    [run] = run_folders(tmp_path)
    with open(run / "predictions.csv") as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == 270
    assert {int(row["prediction"]) for row in rows} <= set(range(10))


def test_fit_with_ckpt_path_last_continues_the_run_in_its_folder(tmp_path):
    args = ["fit", "--config=configs/default.yaml", f"--trainer.default_root_dir={tmp_path}", *FAST]
    train(*args)
    [run] = run_folders(tmp_path)
    refused = train(*args, "--model.hidden_dim=32", "--ckpt_path=last", check=False)
    assert "does not fit the configured model" in refused.stderr
    assert not list(run.glob("config-*.yaml"))  # a refused resume leaves the run as it was
    train(*args, "--trainer.max_epochs=2", "--ckpt_path=last")
    resumed = torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)
    assert (resumed["epoch"], resumed["global_step"]) == (1, 6)  # two epochs of 3 steps
    # The first part's config is kept beside the continued run's, not overwritten.
    kept, latest = (run / "config-1.yaml", run / "config.yaml")
    configs = [yaml.safe_load(path.read_text()) for path in (kept, latest)]
    assert [config["trainer"]["max_epochs"] for config in configs] == [1, 2]
{%- if cookiecutter.logger == "csv" %}
    # Lightning's CSVLogger deletes the metrics.csv it finds: the first part's is kept aside.
    for name, epoch in (("metrics-1.csv", "0"), ("metrics.csv", "1")):
        with open(run / name, newline="") as file:
            validated = [row for row in csv.DictReader(file) if row.get("val/acc")]
        assert [row["epoch"] for row in validated] == [epoch], name
{%- endif %}


def test_fit_with_ckpt_path_last_and_no_run_says_so(tmp_path):
    result = train(
        "fit",
        "--config=configs/default.yaml",
        f"--trainer.default_root_dir={tmp_path}",
        "--ckpt_path=last",
        check=False,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "--ckpt_path=last: no run under" in result.stderr


def test_print_config_output_runs_as_given(tmp_path):
    printed = train("fit", "--config=configs/default.yaml", *FAST, "--print_config").stdout
    config = tmp_path / "printed.yaml"
    config.write_text(printed)
    root = tmp_path / "runs"
    train("fit", f"--config={config}", f"--trainer.default_root_dir={root}")
    [run] = run_folders(root)
    expected = yaml.safe_load(printed)
    expected["trainer"]["default_root_dir"] = str(root)
    assert yaml.safe_load((run / "config.yaml").read_text()) == expected


def test_misspelt_config_key_is_named_without_traceback():
    result = train("fit", "--config=configs/default.yaml", "--model.hiden_dim=3", check=False)
    assert result.returncode != 0
    assert "hiden_dim" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_fit_on_users_own_npz_file(npz_file, tmp_path):
    train(
        "fit",
        "--config=configs/default.yaml",
        f"--trainer.default_root_dir={tmp_path}",
        f"--data.data_path={npz_file}",
    )
    [run] = run_folders(tmp_path)
    assert read_metrics(run, "test")["test/acc"] >= 0.9


@pytest.mark.parametrize(
    ("enabled", "callbacks", "expected"),
    [
        (None, None, ["lightning.pytorch.callbacks.TQDMProgressBar"]),
        (False, None, []),  # --trainer.enable_progress_bar=false stays valid
        (  # a run's saved config.yaml, run again without a bar
            False,
            ["lightning.pytorch.callbacks.TQDMProgressBar", "my_project.MyCallback"],
            ["my_project.MyCallback"],
        ),
        (  # the user's own bar
            None,
            ["lightning.pytorch.callbacks.RichProgressBar"],
            ["lightning.pytorch.callbacks.RichProgressBar"],
        ),
    ],
)
def test_progress_bar_is_added_only_where_the_config_has_none(enabled, callbacks, expected):
    given = None if callbacks is None else [Namespace(class_path=path) for path in callbacks]
    trainer_config = Namespace(enable_progress_bar=enabled, callbacks=given)
    add_progress_bar(trainer_config)
    added = [callback.class_path for callback in trainer_config.callbacks or []]
    assert added == expected
