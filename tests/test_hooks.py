"""The pre-generation hook refuses bad answers before anything is written; free text stays data."""

import tomllib
from pathlib import Path

import pytest
from cookiecutter.exceptions import FailedHookException


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        ({"project_name": "   "}, "project_name is empty"),
        (
            {"project_slug": "My Project"},
            "project_slug 'My Project' is not a valid folder",
        ),
        (
            {"project_slug": "../outside"},
            "project_slug '../outside' is not a valid folder",
        ),
        ({"project_slug": "-dash"}, "project_slug '-dash' is not a valid folder"),
        (
            {"package_name": "my-package"},
            "package_name 'my-package' is not a Python identifier",
        ),
        (
            {"package_name": "3d_model"},
            "package_name '3d_model' is not a Python identifier",
        ),
        ({"package_name": "class"}, "package_name 'class' is a Python keyword"),
        ({"package_name": "torch"}, "package_name 'torch' would shadow"),
        ({"package_name": "lightning"}, "package_name 'lightning' would shadow"),
        ({"package_name": "numpy"}, "package_name 'numpy' would shadow"),
        ({"package_name": "test"}, "package_name 'test' would shadow"),
        ({"package_name": "json"}, "package_name 'json' would shadow"),
        ({"package_name": "MyPackage"}, "package_name 'MyPackage' must be lowercase"),
        ({"python_version": "3.10"}, "python_version '3.10' is not supported"),
        (
            {"python_version": "3.11; rm -rf /"},
            "is not supported: choose one of 3.11, 3.12",
        ),
        ({"author_name": "Ada\nLovelace"}, "author_name contains a line break"),
        ({"description": "two\nlines"}, "description contains a line break"),
    ],
)
def test_bad_answer_is_refused_by_name_and_nothing_is_written(
    bake, tmp_path: Path, capfd, answers, message
):
    with pytest.raises(FailedHookException):
        bake(**answers)
    assert message in capfd.readouterr().err
    assert list((tmp_path / "output").iterdir()) == []


def test_several_bad_answers_are_all_reported(bake, capfd):
    with pytest.raises(FailedHookException):
        bake(package_name="torch", python_version="2.7")
    err = capfd.readouterr().err
    assert "package_name 'torch'" in err and "python_version '2.7'" in err


HOSTILE = 'Bob\'s "Net" \\ C:\\path\\n \'\'\' """ \\'


def test_quotes_and_backslashes_in_free_text_stay_data(bake):
    project = bake(
        project_name='Bob\'s "Net" \\',
        description=HOSTILE,
        author_name=HOSTILE,
        author_email='o"brien@example.com',
    )
    assert project.name == "bob-s-net"
    metadata = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    assert metadata["description"] == HOSTILE
    assert metadata["authors"] == [{"name": HOSTILE, "email": 'o"brien@example.com'}]
    assert (project / "src" / "bob_s_net" / "module.py").is_file()
    assert 'Bob\'s "Net" \\' in (project / "README.md").read_text()
