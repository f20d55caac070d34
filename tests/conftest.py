"""Bake the template with cookiecutter itself, isolated from the user's cookiecutter config."""

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cookiecutter.main import cookiecutter

TEMPLATE = Path(__file__).resolve().parents[1]
CHOICES = {
    key: value
    for key, value in json.loads((TEMPLATE / "cookiecutter.json").read_text()).items()
    if isinstance(value, list) and not key.startswith("_")
}
ALL_COMBINATIONS = [
    dict(zip(CHOICES, values, strict=True)) for values in itertools.product(*CHOICES.values())
]


@pytest.fixture
def bake(tmp_path: Path):
    """Return a function that generates a project from answers and returns its folder."""
    config = tmp_path / "cookiecutterrc.yaml"
    config.write_text(
        f"cookiecutters_dir: {tmp_path / 'cookiecutters'}\nreplay_dir: {tmp_path / 'replay'}\n"
    )

    def bake_project(**answers: str) -> Path:
        output = tmp_path / "output"
        output.mkdir(exist_ok=True)
        project = cookiecutter(
            str(TEMPLATE),
            no_input=True,
            extra_context=answers,
            output_dir=str(output),
            config_file=str(config),
        )
        return Path(project)

    return bake_project


def run(*command: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a command; fail the test with its output if it exits non-zero."""
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, (
        f"{' '.join(command)} exited with {result.returncode}:\n{result.stdout[-6000:]}\n"
        f"{result.stderr[-4000:]}"
    )
    return result


def tool(name: str) -> str:
    """A command-line tool installed beside this Python interpreter."""
    return str(Path(sys.executable).parent / name)


def baked_project_env(project: Path) -> dict[str, str]:
    """The environment a baked project's tests see: its package importable, W&B offline."""
    return {**os.environ, "PYTHONPATH": str(project / "src"), "WANDB_MODE": "offline"}
