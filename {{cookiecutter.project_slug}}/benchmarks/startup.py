"""Start-up time: ``python train.py --help`` against ``python -c "import lightning"``.

    python benchmarks/startup.py              # 5 runs of each, alternating
    python benchmarks/startup.py --repeats 1

Lightning's import is the floor every command pays; what the project adds on top of it (its own
imports, building the command line) is the difference. The last line printed is
``startup_extra <seconds>``: the median of train.py's runs minus the median of the imports.
"""

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "import lightning": [sys.executable, "-c", "import lightning"],
    "train.py --help": [sys.executable, "train.py", "--help"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs of each command (default 5)")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    seconds: dict[str, list[float]] = {name: [] for name in COMMANDS}
    names = list(COMMANDS)
    for repeat in range(args.repeats):
        for name in names if repeat % 2 == 0 else names[::-1]:
            start = time.perf_counter()
            subprocess.run(COMMANDS[name], check=True, stdout=subprocess.DEVNULL)
            seconds[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(times) for name, times in seconds.items()}
    for name, times in seconds.items():
        print(f"{name:<17} median {medians[name]:.2f} s  (min {min(times):.2f} s)")
    print(f"startup_extra {medians['train.py --help'] - medians['import lightning']:.2f}")


if __name__ == "__main__":
    main()
