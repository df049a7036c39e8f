"""``make bench``'s buggy engines: every pair of classic bugs plants, and each bug costs points
in its own assignment (a pair that planted nothing would flatter the batch's throughput); its
count of the CPU a grade spent; and the PyTorch check a passing grade is held against."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from grader.oracles import torch_oracle
from grader.workflows import baseline, bench
from grader.workflows.bench import CLASSIC_BUGS, with_classic_bugs
from tests.helpers.grading import REFERENCE, grade_report
from tests.helpers.programs import TORCH_WHY


@pytest.mark.slow
@pytest.mark.parametrize("which", range(len(CLASSIC_BUGS)))
def test_each_pair_of_classic_bugs_costs_points_in_both_assignments(tmp_path, which):
    report = grade_report(with_classic_bugs(REFERENCE, tmp_path / "buggy", which))
    lost = {item["assignment"] for item in report.items if item["score"] < item["max_score"]}
    assert lost == {"micrograd", "babygrad"}


def test_a_bug_whose_text_is_not_in_the_reference_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "CLASSIC_BUGS", [{"micrograd/engine.py": ("no such line", "x")}])
    with pytest.raises(ValueError, match="exactly once"):
        with_classic_bugs(REFERENCE, tmp_path / "buggy")


def test_the_cpu_a_grade_spent_counts_processes_no_child_of_ours_reaped(tmp_path):
    """A sandboxed worker's tree is killed, and what its processes spent never reaches our
    children's usage; the machine's count has it (other load only adds to it)."""
    done = tmp_path / "done"
    burn = (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    start = time.process_time()\n"
        "    while time.process_time() - start < 0.5:\n"
        "        pass\n"
        "    open(sys.argv[1], 'w').close()\n"
        "os._exit(0)\n"  # the parent leaves at once: the burning child is not ours to reap
    )
    machine = bench._machine_cpu()
    subprocess.run([sys.executable, "-c", burn, str(done)], check=True)
    deadline = time.monotonic() + 120
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert done.exists()
    assert bench._machine_cpu() - machine >= 0.45  # our children's usage has 0.03 s of it


def test_the_grades_timed_take_turns_so_a_drifting_machine_moves_each_alike(monkeypatch):
    """One grade of each in turn: a ratio of their medians is not the machine's drift."""
    order: list[str] = []
    clock = iter(range(1000))
    graded = lambda options, runner: order.append(options.submission.name)  # noqa: E731
    monkeypatch.setattr(bench, "grade", graded)
    monkeypatch.setattr(bench, "_machine_cpu", lambda: float(next(clock)))
    a, b = bench.GradeOptions(REFERENCE / "a"), bench.GradeOptions(REFERENCE / "b")
    timings = bench.timed([bench.graded(a), bench.graded(b)], 3)
    assert order == ["a", "b"] * 3
    assert [t.cpu_s for t in timings] == [1.0, 1.0]


@pytest.mark.slow
def test_the_baseline_is_a_check_that_passes_the_reference_and_fails_a_classic_bug(tmp_path):
    """The two-test PyTorch check a grade is held against checks: a bug it would miss would
    make it a cheaper baseline than a student's own check."""
    if not torch_oracle.available():
        pytest.skip(TORCH_WHY)
    baseline.pytorch_check(REFERENCE, tmp_path / "right")()
    buggy = with_classic_bugs(REFERENCE, tmp_path / "buggy")
    with pytest.raises(subprocess.CalledProcessError):
        baseline.pytorch_check(buggy, tmp_path / "wrong")()


def test_the_passing_grade_is_held_against_the_baseline_or_says_why_not():
    check, passing, warm = bench.Timing(3.0, 3.0), bench.Timing(1.5, 2.0), bench.Timing(0.9, 1.0)
    watched = bench.Timing(0.6, 0.8)
    line, shares = bench._baseline(check, passing, warm, watched)
    assert line.startswith("a two-test PyTorch check (the baseline)")
    assert shares == ["0.50x the check", "0.30x the check: meets <= 0.4x", "0.20x the check"]
    missed = bench._baseline(check, passing, passing, watched)[1][1]
    assert missed.endswith("0.50x the check: MISSES <= 0.4x")
    line, shares = bench._baseline(None, passing, warm, watched)
    assert "not measured, no PyTorch here" in line and shares == ["", "", ""]


def test_a_batch_is_held_against_the_target_and_one_without_bugs_against_its_cpu_budget():
    spent = bench.Timing(wall_s=10.0, cpu_s=16.0)
    line = bench.batch_line(20, 2, True, spent)
    assert line == (
        f"batch of 20 (half with one of {len(CLASSIC_BUGS)} bugs), -j 2: 120.0 a minute, "
        "0.80 s CPU each  MISSES >= 150"
    )
    assert bench.batch_line(20, 1, True, bench.Timing(6.0, 16.0)).endswith("meets >= 150")
    assert bench.batch_line(20, 2, False, spent) == (
        "batch of 20 (none with a bug), -j 2: 120.0 a minute, 0.80 s CPU each  "
        "(the target leaves 0.80 s CPU each on 2 cores)"
    )


def test_the_batches_are_half_buggy_at_each_jobs_count_then_bug_free(tmp_path, monkeypatch):
    """The bug-free batch is the same copies, none planted: what nothing failing costs."""
    graded: list[tuple[int, int]] = []

    def run(options, console):
        planted = [
            copy
            for copy in options.submissions.iterdir()
            if any(
                path.read_text() != (REFERENCE / path.relative_to(copy)).read_text()
                for path in (copy / "babygrad").glob("*.py")
            )
        ]
        graded.append((options.jobs, len(planted)))

    monkeypatch.setattr(bench, "run", run)
    bench.bench_batch(REFERENCE, tmp_path, 4, (1, 2))
    assert graded == [(1, 2), (2, 2), (2, 0)]
