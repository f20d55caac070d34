"""Every preset in configs/ loads, stacks on the default config and runs."""

from pathlib import Path

import pytest
import yaml

from .conftest import FAST, PROJECT_ROOT, run_folders, train

PRESETS = sorted(path.name for path in (PROJECT_ROOT / "configs").glob("*.yaml"))


def test_the_presets_are_the_documented_ones():
    assert PRESETS == [
        "bf16.yaml",
        "ddp.yaml",
        "debug.yaml",
        "default.yaml",
        "fp16.yaml",
        "fsdp.yaml",
        "profile.yaml",
    ]


@pytest.mark.parametrize("preset", [p for p in PRESETS if p != "fsdp.yaml"])
def test_preset_runs_a_fast_dev_run(preset: str, tmp_path: Path):
    args = ["fit", "--config=configs/default.yaml", f"--config=configs/{preset}"]
    args += ["--trainer.fast_dev_run=true", f"--trainer.default_root_dir={tmp_path}"]
    if preset == "ddp.yaml":  # two processes on a CPU machine
        args += ["--trainer.accelerator=cpu", "--trainer.devices=2"]
    result = train(*args)
    if preset == "ddp.yaml":
        assert "MEMBER: 2/2" in result.stderr + result.stdout
    if preset == "fp16.yaml":  # float16 AMP needs CUDA; on CPU Lightning falls back to bf16
        assert "bfloat16 Automatic Mixed Precision" in result.stderr + result.stdout


def test_fsdp_preset_stacks_into_a_config_that_runs_as_given(tmp_path: Path):
    # Lightning runs FSDP on CUDA only: on a CPU machine the stacked config is checked to load,
    # resolve to Lightning's FSDP strategy, and print a config that parses again.
    args = ["fit", "--config=configs/default.yaml", "--config=configs/fsdp.yaml"]
    printed = train(*args, "--print_config").stdout
    config = yaml.safe_load(printed)
    assert config["trainer"]["strategy"]["class_path"].endswith("FSDPStrategy")
    (tmp_path / "fsdp.yaml").write_text(printed)
    train("fit", f"--config={tmp_path / 'fsdp.yaml'}", "--print_config")


def test_debug_preset_runs_its_small_limits(tmp_path: Path):
    args = ["fit", "--config=configs/default.yaml", "--config=configs/debug.yaml"]
    result = train(*args, f"--trainer.default_root_dir={tmp_path}")
    assert "`Trainer.fit` stopped: `max_epochs=2` reached." in result.stderr + result.stdout


def test_default_config_is_seeded_and_deterministic():
    config = yaml.safe_load((PROJECT_ROOT / "configs" / "default.yaml").read_text())
    assert isinstance(config["seed_everything"], int)
    assert config["trainer"]["deterministic"] is True
    assert config["weights_only"] is True
    assert config["non_finite"]["policy"] == "stop"


def test_profile_preset_writes_its_report_to_the_run_folder(tmp_path: Path):
    train(
        "fit",
        "--config=configs/default.yaml",
        "--config=configs/profile.yaml",
        f"--trainer.default_root_dir={tmp_path}",
        *FAST,
    )
    [run] = run_folders(tmp_path)
    report = (run / "fit-profile.txt").read_text()
    assert "run_training_batch" in report and "[Callback]NonFiniteGuard" in report
