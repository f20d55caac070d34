"""Train, evaluate and apply the model: ``python train.py fit --config configs/default.yaml``."""

from {{ cookiecutter.package_name }}.cli import main

if __name__ == "__main__":
    main()
