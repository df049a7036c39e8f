"""What a batch lane's grading forks cost: ``python -m tests.fork_costs SUBMISSION... [--repeats
N]`` warms a lane in this process (``lane._warm_up``), then grades each submission ``N`` times
in a row as ``lane.serve`` does (each assignment's grading command forked, recordings in
memory: the first grade records, the next ones replay), and prints, for each assignment, the
first fork's CPU and the median of the replaying ones: the fork's own CPU (``os.times`` as it
exits; its workers are other processes) and its phases (``process_time`` marks: configure,
collect, the tests, the session's finish). It runs in a lane's environment
(``prestart.grading_environment``). Run it on a quiet machine; compare medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from grader.batch import lane
from grader.grading import rubric
from grader.grading.options import IN_MEMORY, GradeOptions
from grader.run.api import pytest_command, pytest_words, selected_assignments
from grader.run.prestart import grading_environment
from grader.sandbox import sharing

PHASES = ("configure", "collect", "tests", "finish")


class Phases:
    """A pytest plugin that notes the fork's CPU time at the end of each phase."""

    def __init__(self) -> None:
        self.ends: dict[str, float] = {}

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self) -> None:
        self.ends["configure"] = time.process_time()

    def pytest_collection_finish(self) -> None:
        self.ends["collect"] = time.process_time()

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self) -> Any:
        self.ends["tests"] = time.process_time()
        result = yield
        self.ends["finish"] = time.process_time()
        return result


def timed(main: Any, costs: Path) -> Any:
    """``pytest.main`` in a fork, writing its CPU and phases to ``costs/<pid>.json``."""

    def run(args: list[str]) -> int:
        phases = Phases()
        try:
            return main(args, plugins=[phases])
        finally:
            times = os.times()
            ends = [0.0, *(phases.ends.get(p, 0.0) for p in PHASES)]
            spent = {p: ends[n + 1] - ends[n] for n, p in enumerate(PHASES)}
            whole = {"fork": times.user + times.system, "system": times.system}
            (costs / f"{os.getpid()}.json").write_text(json.dumps({**whole, **spent}))

    return run


def graded(submission: Path, repeats: int, costs: Path) -> dict[str, list[dict[str, float]]]:
    """Each assignment's forks' costs, grade after grade, in this warm lane."""
    options = GradeOptions(submission, replay=IN_MEMORY)
    assignments = selected_assignments(options, rubric.load(options.rubric))
    found: dict[str, list[dict[str, float]]] = defaultdict(list)
    zygotes = sharing.Lane()
    try:
        for _ in range(repeats):
            for slot, assignment in enumerate(assignments):
                with tempfile.TemporaryDirectory(prefix="fork-costs-") as work:
                    results = Path(work) / "results.json"
                    command = pytest_command(assignment, options, results, slot)
                    fork = lane._fork(pytest_words(command), work)
                    lane._runs([fork], zygotes)
                    zygotes.clear()
                    found[assignment.name].append(
                        json.loads((costs / f"{fork[0]}.json").read_text())
                    )
    finally:
        zygotes.close()
    return found


def main() -> None:
    if os.environ.get("PYTHONHASHSEED") != "0":  # a lane's own environment, as it is started
        command = [sys.executable, "-m", "tests.fork_costs", *sys.argv[1:]]
        os.execve(sys.executable, command, grading_environment())
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("submissions", nargs="+", type=Path)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    lane._warm_up()
    with tempfile.TemporaryDirectory(prefix="fork-costs-") as costs:
        pytest.main = timed(pytest.main, Path(costs))  # the forks' pytest.main
        for submission in args.submissions:
            for assignment, forks in graded(submission, args.repeats, Path(costs)).items():
                first, replays = forks[0], forks[1:] or forks
                median = {k: statistics.median(f[k] for f in replays) for k in first}
                print(
                    f"{submission.name} {assignment}: first {first['fork']:.3f} s, "
                    f"replaying {median['fork']:.3f} s (system {median['system']:.3f}; "
                    + ", ".join(f"{p} {median[p] * 1000:.0f} ms" for p in PHASES)
                    + f"; median of {len(replays)})",
                    flush=True,
                )


if __name__ == "__main__":
    main()
