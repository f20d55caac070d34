"""The README's two opening commands stay true: CI runs the second, the first names the bake."""

import json
import re

from .conftest import TEMPLATE

FENCED_BASH = re.compile(r"```bash\n(.*?)```", re.DOTALL)


def opening_commands() -> list[str]:
    """The command lines of the README's first two bash blocks, without their comments."""
    blocks = FENCED_BASH.findall((TEMPLATE / "README.md").read_text())[:2]
    return [
        "\n".join(line for line in block.splitlines() if line and not line.startswith("#"))
        for block in blocks
    ]


def test_ci_runs_the_readme_test_command_verbatim():
    _, test_command = opening_commands()
    ci_lines = (TEMPLATE / ".ci" / "run").read_text().splitlines()
    assert test_command in ci_lines
    assert "set -euo pipefail" in ci_lines  # a failing or empty (exit 5) pytest fails CI


def test_readme_train_command_enters_the_default_project():
    train_command, _ = opening_commands()
    defaults = json.loads((TEMPLATE / "cookiecutter.json").read_text())
    default_slug = defaults["project_name"].lower().replace(" ", "-")
    assert f"cd generated/{default_slug} " in train_command
    assert train_command.endswith("python train.py fit --config configs/default.yaml")
