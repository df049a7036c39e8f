"""``make bench``: how long a student waits for a grade, passing and failing, with and without
recorded examples to replay, and how many submissions per minute a batch grades.

Targets (2 cores, issues 34 and 52): a passing grade with a warm replay cache within 0.4x the
wall time of a two-test PyTorch check of the same engine (``grader.workflows.baseline``, timed
in turn with the grades) and within 1.5 s; a failing grade (one classic bug in each
assignment) within 1.2x a passing one; a batch of correct and buggy engines, half each, at 150
submissions a minute or more. Beside them, a re-grade as ``watch`` makes it, in the warm
grading processes it keeps (no target of its own). Each grade is reported as the median wall
time of several runs and the CPU time the machine spent on it (the trusted grading processes
and the sandboxed workers: measure on a quiet machine); then where that CPU time goes, kind of
process by kind of process (``grader.workflows.profiling``).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from grader.batch.batch import BatchOptions, run
from grader.batch.lane import Lanes
from grader.grading.options import IN_MEMORY
from grader.layout import DEFAULT_REFERENCE
from grader.run.api import GradeOptions, grade
from grader.workflows import baseline
from grader.workflows.profiling import profile

CLASSIC_BUGS: list[dict[str, tuple[str, str]]] = [
    {
        "micrograd/engine.py": (
            "self.grad += (1.0 - t * t) * out.grad",
            "self.grad += (1.0 - t) * out.grad",
        ),
        "babygrad/ops.py": (
            "_grad(unbroadcast(g * b.data, a.shape), a),",
            "_grad(unbroadcast(g * a.data, a.shape), a),",
        ),
    },
    {
        "micrograd/engine.py": ("(1.0 if self.data > 0 else 0.0) * out.grad", "out.grad"),
        "babygrad/ops.py": ("-g * a.data / (b.data * b.data)", "-g * a.data / b.data"),
    },
    {
        "micrograd/engine.py": ("self.grad += out.grad\n", "self.grad = out.grad\n"),
        "babygrad/ops.py": (
            "np.broadcast_to(np.reshape(out_grad.data, kept), a.shape)",
            "np.broadcast_to(out_grad.data, a.shape)",
        ),
    },
    {
        "micrograd/engine.py": ("for node in reversed(order):", "for node in order:"),
        "babygrad/tensor.py": ("for node in reversed(order):", "for node in order:"),
    },
]
"""Bugs students make, one in each assignment per entry: tanh's derivative as ``1 - t`` and
Mul's gradient for ``a`` taken from ``a`` itself (the failing grade's); ReLU passing every
gradient and Div's gradient for ``b`` not squared; ``=`` for ``+=`` in addition's backward and
a summation's gradient that loses the summed axes; a ``backward()`` that walks the order
forwards, in both. A batch's buggy engines take them in turn."""
BASELINE_SHARE = 0.4
FAILING_RATIO = 1.2
WARM_PASSING_S = 1.5
BATCH_PER_MINUTE = 150.0
CORES = 2
"""The cores of the machine the targets are set on."""


@dataclass
class Timing:
    wall_s: float
    cpu_s: float


def _machine_cpu() -> float:
    """CPU seconds the whole machine has spent busy: a grade's share counts its sandboxed
    workers too, which this process's children's usage loses (a worker's tree is killed, and
    whoever reaps the sandbox's processes is not in our line). Read on a quiet machine, as
    every figure here; without /proc, the children's usage stands in."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(f) for f in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def timed(runs: Sequence[Callable[[], object]], repeats: int) -> list[Timing]:
    """Median wall and CPU time of ``repeats`` calls of each of ``runs`` (a grade, the
    baseline), taken in turn (one of each, then again): this machine's speed drifts by a third
    within an hour, and a ratio of two medians taken minutes apart measured the drift as much
    as the grades."""
    walls: list[list[float]] = [[] for _ in runs]
    cpus: list[list[float]] = [[] for _ in runs]
    for _ in range(repeats):
        for call, wall, cpu in zip(runs, walls, cpus, strict=True):
            started, before = time.perf_counter(), _machine_cpu()
            call()
            wall.append(time.perf_counter() - started)
            cpu.append(_machine_cpu() - before)
    return [
        Timing(statistics.median(wall), statistics.median(cpu))
        for wall, cpu in zip(walls, cpus, strict=True)
    ]


def graded(options: GradeOptions, runner: Lanes | None = None) -> Callable[[], object]:
    return lambda: grade(options, runner)


def with_classic_bugs(reference: Path, dest: Path, which: int = 0) -> Path:
    """A copy of the reference with the ``which``-th pair of ``CLASSIC_BUGS`` planted."""
    shutil.copytree(reference, dest, ignore=shutil.ignore_patterns("__pycache__"))
    for name, (right, wrong) in CLASSIC_BUGS[which].items():
        path = dest / name
        text = path.read_text()
        if text.count(right) != 1:
            raise ValueError(f"{name} does not have {right!r} exactly once: no bug to plant")
        path.write_text(text.replace(right, wrong))
    return dest


def _line(name: str, timing: Timing, note: str = "") -> str:
    return f"{name:<42} {timing.wall_s:6.2f} s wall {timing.cpu_s:6.2f} s CPU  {note}"


def _verdict(met: bool, target: str) -> str:
    return f"{'meets' if met else 'MISSES'} {target}"


def bench_grades(reference: Path, work: Path, repeats: int) -> None:
    buggy = with_classic_bugs(reference, work / "buggy")
    cache = work / "replay"
    check = baseline.pytorch_check(reference, work)
    runs = [graded(GradeOptions(reference)), graded(GradeOptions(buggy))]
    passing, failing, *checked = timed([*runs, *([check] if check else [])], repeats)
    grade(GradeOptions(reference, replay=cache))  # records the examples
    with Lanes(2) as lanes:
        grade(GradeOptions(reference, replay=cache), lanes)  # a watch's first grade
        warm, warm_failing, watched = timed(
            [
                graded(GradeOptions(reference, replay=cache)),
                graded(GradeOptions(buggy, replay=cache)),
                graded(GradeOptions(reference, replay=cache), lanes),
            ],
            repeats,
        )
    ratio, warm_ratio = failing.cpu_s / passing.cpu_s, warm_failing.cpu_s / warm.cpu_s
    check_line, shares = _baseline(checked[0] if checked else None, passing, warm, watched)
    print(check_line)
    print(_line("passing grade", passing, shares[0]))
    target = _verdict(ratio <= FAILING_RATIO, f"<= {FAILING_RATIO}x")
    print(
        _line("failing grade (a classic bug in each)", failing, f"{ratio:.2f}x passing: {target}")
    )
    warm_target = _verdict(warm.wall_s <= WARM_PASSING_S, f"<= {WARM_PASSING_S} s")
    warm_notes = "; ".join(note for note in (warm_target, shares[1]) if note)
    print(_line("passing grade, warm replay cache", warm, warm_notes))
    print(
        _line("failing grade, warm replay cache", warm_failing, f"{warm_ratio:.2f}x passing (warm)")
    )
    print(_line("passing grade, re-graded by watch", watched, shares[2]))


def _baseline(
    check: Timing | None, passing: Timing, warm: Timing, watched: Timing
) -> tuple[str, list[str]]:
    """The baseline's line, and what the passing grades' lines say of it: the share of its
    wall time each took. The target is the warm grade's, a student's grade after the first
    (issue 52's figures, 0.47-0.54x, were that grade's); the first one draws every example,
    and ``watch`` re-grades in the warm grading processes it keeps (``watched``)."""
    if check is None:
        return "a two-test PyTorch check (the baseline): not measured, no PyTorch here", [""] * 3
    share = warm.wall_s / check.wall_s
    target = _verdict(share <= BASELINE_SHARE, f"<= {BASELINE_SHARE}x")
    return _line("a two-test PyTorch check (the baseline)", check), [
        f"{passing.wall_s / check.wall_s:.2f}x the check",
        f"{share:.2f}x the check: {target}",
        f"{watched.wall_s / check.wall_s:.2f}x the check",
    ]


def bench_profile(reference: Path, work: Path) -> None:
    """The sampled CPU of a passing and a failing grade, as ``python -m grader grade`` runs
    them, by kind of process and function."""
    buggy = with_classic_bugs(reference, work / "profiled-buggy")
    grading = [sys.executable, "-m", "grader", "grade", "--no-replay", "--submission"]
    # Once unprofiled: the command checks a reference once per grader source (``trust``).
    subprocess.run([*grading, str(reference)], stdout=subprocess.DEVNULL, check=False)
    for name, submission in (("passing", reference), ("failing", buggy)):
        found = profile([*grading, str(submission)])
        if found is None:
            print(f"{name} grade: no profile (pip install py-spy, and allow ptrace)")
            continue
        print(f"where the CPU of a {name} grade goes:")
        print("\n".join(found.lines()))


def bench_batch(reference: Path, work: Path, copies: int, jobs: tuple[int, ...] = (1, 2)) -> None:
    """Batch throughput on copies of the reference, every other one with a pair of classic bugs
    (each pair in turn), as ``python -m grader batch`` grades them (warm lanes, recordings in
    memory); each copy differs by a comment, so none is a ledger hit. Then, at the last ``-j``,
    the same batch without a bug: what an upload costs when nothing fails, beside the CPU the
    target leaves each upload."""
    for n, (n_jobs, buggy) in enumerate([*((j, True) for j in jobs), (jobs[-1], False)]):
        uploads = work / f"uploads-{n}"
        for k in range(copies):
            copy = uploads / f"student{k:03d}"
            if buggy and k % 2:
                with_classic_bugs(reference, copy, k // 2 % len(CLASSIC_BUGS))
            else:
                shutil.copytree(reference, copy, ignore=shutil.ignore_patterns("__pycache__"))
            with (copy / "micrograd" / "engine.py").open("a") as engine:
                engine.write(f"\n# copy {k}\n")
        options = BatchOptions(
            uploads, work / f"out-{n}", GradeOptions(Path(), replay=IN_MEMORY), jobs=n_jobs
        )
        started, before = time.monotonic(), _machine_cpu()
        run(options, Console(quiet=True))
        spent = Timing(time.monotonic() - started, _machine_cpu() - before)
        print(batch_line(copies, n_jobs, buggy, spent))


def batch_line(copies: int, n_jobs: int, buggy: bool, spent: Timing) -> str:
    """A batch's rate and the CPU each upload took; a batch half of whose uploads have bugs is
    held against the target, one without is set beside the CPU the target leaves an upload
    (``CORES`` busy for a minute, over ``BATCH_PER_MINUTE``)."""
    rate, each = copies / (spent.wall_s / 60), spent.cpu_s / copies
    mix = f"half with one of {len(CLASSIC_BUGS)} bugs" if buggy else "none with a bug"
    measured = f"batch of {copies} ({mix}), -j {n_jobs}: {rate:.1f} a minute, {each:.2f} s CPU each"
    if buggy:
        return f"{measured}  {_verdict(rate >= BATCH_PER_MINUTE, f'>= {BATCH_PER_MINUTE:.0f}')}"
    budget = CORES * 60 / BATCH_PER_MINUTE
    return f"{measured}  (the target leaves {budget:.2f} s CPU each on {CORES} cores)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--submission",
        type=Path,
        default=DEFAULT_REFERENCE,
        help="a correct engine (the bugs are planted in a copy of it)",
    )
    parser.add_argument(
        "--batch", type=int, default=12, help="submissions in the batch runs (0: skip them)"
    )
    parser.add_argument(
        "--no-profile", action="store_true", help="skip the profile of a passing and failing grade"
    )
    parser.add_argument(
        "--jobs", type=int, nargs="+", default=[1, 2], help="the -j values the batch runs at"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="grader-bench-") as tmp:
        bench_grades(args.submission, Path(tmp), args.repeats)
        if not args.no_profile:
            bench_profile(args.submission, Path(tmp))
        if args.batch:
            bench_batch(args.submission, Path(tmp), args.batch, tuple(args.jobs))


if __name__ == "__main__":
    main()
