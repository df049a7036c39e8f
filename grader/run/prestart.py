"""A grade's trusted grading process, started before the command has done anything else.

Warming that process up (Python, pytest, Hypothesis, numpy, the plugin and the suites) takes
longer than everything the command does before it can hand the process its runs: importing
itself, reading the rubric, checking the reference, unpacking the upload. Started first, on the
other core, it is warm by the time the runs are known (``api.in_one_process`` takes it). Only
the standard library here: ``python -m grader`` imports this before anything else.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import sys

from grader import ONE_THREAD

_started: list[subprocess.Popen[str]] = []


def grading_environment() -> dict[str, str]:
    """The environment of a grading process: no plugin autoloading, no bytecode files, one
    hash seed, one thread in each BLAS pool (``grader.ONE_THREAD``), and no ``CI`` variable
    (Hypothesis would load its own CI profile)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("PYTHON") and key != "CI"
    }
    env.update(
        ONE_THREAD,
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONHASHSEED="0",
    )
    return env


def start(sandbox: str = "auto") -> subprocess.Popen[str]:
    """A grading process that warms up at once, then waits for its runs on stdin
    (``grader.batch.lane.serve_once``); ``sandbox``: theirs, so that it starts a zygote for
    their workers only where one would fork them."""
    return subprocess.Popen(
        [sys.executable, "-I", "-m", "grader.batch.lane", "--once", "--sandbox", sandbox],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=grading_environment(),
        text=True,
    )


def begin(argv: list[str]) -> None:
    """Start the grading process now if ``argv`` asks for a grade (``grade`` or
    ``check-reference``, not their help), for ``take`` to hand over."""
    command = next((word for word in argv if not word.startswith("-")), "")
    if command in ("grade", "check-reference") and not {"-h", "--help"} & set(argv):
        _started.append(start(sandbox_of(argv)))


def sandbox_of(argv: list[str]) -> str:
    """The sandbox ``argv`` asks for (``--sandbox``, as the command will read it; a spelling
    missed here costs a zygote started for nothing, or not started ahead: never a grade)."""
    for n, word in enumerate(argv):
        if word == "--sandbox" and n + 1 < len(argv):
            return argv[n + 1]
        if word.startswith("--sandbox="):
            return word.partition("=")[2]
    return "auto"


def take() -> subprocess.Popen[str]:
    """The grading process ``begin`` started, or a new one."""
    return _started.pop() if _started else start()


@atexit.register
def _close() -> None:
    """A process nobody took (the command stopped early) sees its input end and exits."""
    for process in _started:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            process.communicate(timeout=10)
