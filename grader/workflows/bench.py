"""``make bench``: how long a full grade takes, how many checks per second it makes, and how
many submissions per minute a batch grades.

Targets (2-core machine): a full grade of one correct submission, both assignments, Python and
torch start-up included, under 10 s wall; the aim is 5 s. Reported as min/median of runs.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from grader.layout import DEFAULT_REFERENCE
from grader.workflows.api import GradeOptions, grade
from grader.workflows.batch import throughput

TARGET_S = 10.0


def measure(run: Callable[[], object], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return times


def summary(name: str, values: list[float], unit: str) -> str:
    return f"{name}: min {min(values):.2f} {unit}, median {statistics.median(values):.2f} {unit}"


def bench_grade(submission: Path, repeats: int) -> None:
    reports = []

    def run() -> None:
        reports.append(grade(GradeOptions(submission=submission)))

    walls = measure(run, repeats)
    rates = [r.checks / w for r, w in zip(reports, walls, strict=True)]
    print(summary(f"full grade of {submission.name} (both assignments)", walls, "s"))
    print(summary("checks per second", rates, "/s"))
    print(f"checks per grade: {reports[0].checks}; score {reports[0].score}/"
          f"{reports[0].max_score}")
    verdict = "meets" if statistics.median(walls) < TARGET_S else "MISSES"
    print(f"{verdict} the {TARGET_S:.0f} s target")


def bench_batch(copies: int) -> None:
    """Batch throughput: distinct copies of the reference, on one lane and on two."""
    for jobs in (1, 2):
        print(f"batch of {copies} submissions, -j {jobs}: "
              f"{throughput(copies, jobs):.1f} submissions per minute")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--submission", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--batch", type=int, default=8, help="submissions in the batch runs "
                                                             "(0: skip them)")
    args = parser.parse_args()
    bench_grade(args.submission, args.repeats)
    if args.batch:
        bench_batch(args.batch)


if __name__ == "__main__":
    main()
