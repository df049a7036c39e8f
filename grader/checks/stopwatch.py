"""A grading test's time: what stops Hypothesis from searching, and above all shrinking, for
minutes on slow examples, when every request is within its own time limit."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

TEST_WALL_FACTOR = 4
"""A test may use this many times its CPU limit of wall-clock time, a backstop for a starved
machine."""


@dataclass(frozen=True)
class Stopwatch:
    """Started at a test's first request: the wall clock, the grader's CPU time and the
    worker's (``worker_cpu``: its running process tree's, which starts again from zero when
    the worker restarts, so the worker's part is never counted below zero)."""

    wall: float
    cpu: float
    worker_cpu: float

    @classmethod
    def start(cls, worker_cpu: Callable[[], float]) -> Stopwatch:
        return cls(time.monotonic(), time.process_time(), worker_cpu())

    def over(self, limit: float, worker_cpu: Callable[[], float]) -> bool:
        """Whether the test has used more than ``limit`` seconds of CPU time (the grader's and
        the worker's), or ``TEST_WALL_FACTOR`` times that of wall time. CPU time is read only
        once the wall clock passes the limit, and machine load does not move it."""
        elapsed = time.monotonic() - self.wall
        if elapsed <= limit:
            return False
        used = time.process_time() - self.cpu + max(0.0, worker_cpu() - self.worker_cpu)
        return used > limit or elapsed > limit * TEST_WALL_FACTOR
