"""The baked project's own test suite passes, for every combination of options that changes code.

`optimization` and `logger` change the generated code: all six combinations run their suite
(each includes a full default fit held to 95% test accuracy, and a two-process DDP run).
`license` and `ci` only add or remove files (checked for every combination in test_bake.py);
they vary across these six bakes so that each of their values is baked with a running suite too.
"""

import sys

import pytest

from .conftest import baked_project_env, run

CODE_COMBINATIONS = [
    {"optimization": "automatic", "logger": "csv", "license": "MIT", "ci": "github"},
    {
        "optimization": "automatic",
        "logger": "tensorboard",
        "license": "Apache-2.0",
        "ci": "none",
    },
    {
        "optimization": "automatic",
        "logger": "wandb",
        "license": "BSD-3-Clause",
        "ci": "github",
    },
    {"optimization": "manual", "logger": "csv", "license": "none", "ci": "none"},
    {
        "optimization": "manual",
        "logger": "tensorboard",
        "license": "MIT",
        "ci": "github",
    },
    {
        "optimization": "manual",
        "logger": "wandb",
        "license": "Apache-2.0",
        "ci": "none",
    },
]


@pytest.mark.parametrize(
    "answers", CODE_COMBINATIONS, ids=lambda answers: "-".join(answers.values())
)
def test_baked_project_test_suite_passes(bake, answers):
    project = bake(**answers)
    result = run(
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        cwd=project,
        env=baked_project_env(project),
    )
    print(result.stdout[-3000:])
