"""Remove what the answers turned off, then print the next steps.

Only file operations, each safe to repeat: template updates run this hook again.
"""

import json
import shutil
from pathlib import Path

ANSWERS = json.loads(r"""{{ cookiecutter | tojson }}""")


def remove(path: Path) -> None:
    """Delete a file or folder if it is there."""
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def main() -> None:
    project = Path.cwd()
    if ANSWERS["ci"] == "none":
        remove(project / ".github")
    if ANSWERS["license"] == "none":
        remove(project / "LICENSE")
    if ANSWERS["optimization"] == "automatic":  # the parity test checks a hand-written loop
        remove(project / "tests" / "test_manual_optimization.py")

    print(
        f"""
Created {project}

Next steps:
    cd {ANSWERS["project_slug"]}
    python -m venv .venv && . .venv/bin/activate
    pip install -e ".[dev]"
    python train.py fit --config configs/default.yaml
    pytest
"""
    )


if __name__ == "__main__":
    main()
