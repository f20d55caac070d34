"""Every option combination bakes an exact file tree that lints clean."""

import json
import re
import sys
import zipfile
from pathlib import Path

import pytest
from cookiecutter.main import cookiecutter

from .conftest import ALL_COMBINATIONS, TEMPLATE, run, tool

COMMON_FILES = {
    ".cookiecutter.json",
    ".gitignore",
    ".python-version",
    "README.md",
    "benchmarks/parity.py",
    "benchmarks/startup.py",
    "configs/bf16.yaml",
    "configs/ddp.yaml",
    "configs/debug.yaml",
    "configs/default.yaml",
    "configs/fp16.yaml",
    "configs/fsdp.yaml",
    "configs/profile.yaml",
    "export.py",
    "pyproject.toml",
    "scripts/slurm.sbatch",
    "src/digit_classifier/__init__.py",
    "src/digit_classifier/checkpointing.py",
    "src/digit_classifier/cli.py",
    "src/digit_classifier/datamodule.py",
    "src/digit_classifier/export.py",
    "src/digit_classifier/module.py",
    "src/digit_classifier/network.py",
    "src/digit_classifier/non_finite.py",
    "src/digit_classifier/reproducibility.py",
    "src/digit_classifier/throughput.py",
    "tests/__init__.py",
    "tests/conftest.py",
    "tests/signal_at_step.py",
    "tests/test_checkpointing.py",
    "tests/test_configs.py",
    "tests/test_datamodule.py",
    "tests/test_distributed.py",
    "tests/test_export.py",
    "tests/test_logging.py",
    "tests/test_network.py",
    "tests/test_non_finite.py",
    "tests/test_reliability.py",
    "tests/test_throughput.py",
    "tests/test_train.py",
    "train.py",
}
# Template markup that must never reach a generated file; GitHub's own ${{ }} is allowed.
LEFTOVER_MARKUP = re.compile(r"(?<!\$)\{\{|\{%|%\}|cookiecutter\.(?!json)")


def expected_files(answers: dict[str, str]) -> set[str]:
    files = set(COMMON_FILES)
    if answers["license"] != "none":
        files.add("LICENSE")
    if answers["ci"] == "github":
        files.add(".github/workflows/ci.yml")
    if answers["optimization"] == "manual":
        files.add("tests/test_manual_optimization.py")
    return files


def snapshot(folder: Path) -> dict[Path, bytes]:
    """Every file under a folder, by relative path, with its content."""
    return {
        path.relative_to(folder): path.read_bytes() for path in folder.rglob("*") if path.is_file()
    }


def combination_id(answers: dict[str, str]) -> str:
    return "-".join(answers.values())


@pytest.mark.parametrize("answers", ALL_COMBINATIONS, ids=combination_id)
def test_bake_has_exact_tree_no_markup_and_lints_clean(bake, answers):
    project = bake(**answers)
    files = {str(path.relative_to(project)) for path in project.rglob("*") if path.is_file()}
    assert files == expected_files(answers)
    for name in files:
        text = (project / name).read_text()
        assert not LEFTOVER_MARKUP.search(text), f"template markup left in {name}"
        ends_in_one_newline = text.endswith("\n") and not text.endswith("\n\n")
        assert text == "" or ends_in_one_newline, f"{name} must end in exactly one newline"
    run(tool("ruff"), "check", "--no-cache", ".", cwd=project)
    run(tool("ruff"), "format", "--check", "--no-cache", ".", cwd=project)
    if answers["ci"] == "github":
        run(tool("actionlint"), ".github/workflows/ci.yml", cwd=project)
    recorded = json.loads((project / ".cookiecutter.json").read_text())["cookiecutter"]
    assert {key: recorded[key] for key in answers} == answers


def test_post_generation_hook_can_run_again(bake, tmp_path):
    """Template updates re-run the hook over an existing project: it must not fail or change it."""
    project = bake(ci="none", license="none")
    answers = json.loads((project / ".cookiecutter.json").read_text())["cookiecutter"]
    before = snapshot(project)
    hook_source = (TEMPLATE / "hooks" / "post_gen_project.py").read_text()
    hook = tmp_path / "post_gen_project.py"
    hook.write_text(hook_source.replace("{{ cookiecutter | tojson }}", json.dumps(answers)))
    for _ in range(2):
        run(sys.executable, str(hook), cwd=project)
    assert snapshot(project) == before


@pytest.mark.parametrize("license_name", ["MIT", "Apache-2.0", "BSD-3-Clause", "none"])
def test_baked_project_builds_an_installable_wheel(bake, tmp_path, license_name):
    project = bake(license=license_name)
    wheels = tmp_path / "wheels"
    command = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
    ]
    run(*command, "--wheel-dir", str(wheels), ".", cwd=project)
    [wheel] = wheels.glob("digit_classifier-0.1.0-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read("digit_classifier-0.1.0.dist-info/METADATA").decode()
    assert "digit_classifier/module.py" in names
    if license_name == "none":
        assert "License-Expression" not in metadata
    else:
        assert f"License-Expression: {license_name}" in metadata


def test_recorded_answers_regenerate_the_same_project(bake, tmp_path):
    """`.cookiecutter.json` is a replay file: a later template can regenerate the project."""
    project = bake(optimization="manual", logger="wandb", license="none", ci="none")
    replayed = cookiecutter(
        str(TEMPLATE),
        replay=str(project / ".cookiecutter.json"),
        output_dir=str(tmp_path / "replayed"),
        config_file=str(tmp_path / "cookiecutterrc.yaml"),
    )
    assert snapshot(Path(replayed)) == snapshot(project)
