"""Refuse bad answers before cookiecutter writes anything.

The answers arrive as JSON data (rendered with ``tojson``, which also escapes single quotes),
never pasted into code, so quotes, backslashes and newlines in them cannot change what this
script does.
"""

import json
import keyword
import re
import sys

ANSWERS = json.loads(r"""{{ cookiecutter | tojson }}""")

# Imports a generated project (or its tests and tools) relies on; a package of the same name
# would shadow them.
RESERVED_NAMES = {
    "cookiecutter",
    "jsonargparse",
    "lightning",
    "lightning_fabric",
    "lightning_utilities",
    "numpy",
    "pytest",
    "pytorch_lightning",
    "sklearn",
    "tensorboard",
    "test",
    "tests",
    "torch",
    "torchmetrics",
    "wandb",
    "yaml",
}
SLUG_PATTERN = re.compile(r"^[a-z0-9]+(?:[-_.][a-z0-9]+)*$")
SINGLE_LINE_FIELDS = ("project_name", "description", "author_name", "author_email")


def find_problems(answers: dict) -> list[str]:
    """Return one sentence for every answer that cannot produce a working project."""
    problems = []
    if not answers["project_name"].strip():
        problems.append("project_name is empty: give the project a name, e.g. 'Digit Classifier'.")
    for field in SINGLE_LINE_FIELDS:
        if any(char in answers[field] for char in "\r\n"):
            problems.append(f"{field} contains a line break: it must fit on one line.")

    slug = answers["project_slug"]
    if not SLUG_PATTERN.match(slug):
        problems.append(
            f"project_slug {slug!r} is not a valid folder and distribution name: use lowercase "
            "letters and digits separated by single '-', '_' or '.', e.g. 'digit-classifier'."
        )

    package = answers["package_name"]
    if not package.isidentifier() or not package.isascii():
        problems.append(
            f"package_name {package!r} is not a Python identifier: use lowercase ASCII letters, "
            "digits and '_', not starting with a digit, e.g. 'digit_classifier'."
        )
    elif keyword.iskeyword(package) or keyword.issoftkeyword(package):
        problems.append(f"package_name {package!r} is a Python keyword: choose another name.")
    elif package.lower() in RESERVED_NAMES or package in sys.stdlib_module_names:
        problems.append(
            f"package_name {package!r} would shadow the module of the same name that the "
            "project imports: choose another name, e.g. 'my_" + package + "'."
        )
    elif package != package.lower():
        problems.append(f"package_name {package!r} must be lowercase (PEP 8).")

    supported = answers["_supported_python_versions"]
    if answers["python_version"] not in supported:
        problems.append(
            f"python_version {answers['python_version']!r} is not supported: choose one of "
            f"{', '.join(supported)}."
        )
    return problems


def main() -> int:
    problems = find_problems(ANSWERS)
    if not problems:
        return 0
    print("ERROR: cannot generate the project:", file=sys.stderr)
    for problem in problems:
        print(f"  - {problem}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
