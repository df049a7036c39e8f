"""A batch lane's trusted side: a long-lived process that forks one grading run per request.

Starting Python and importing pytest, Hypothesis and numpy costs about as much as grading a
correct submission. A lane pays it once: each grading run is a fork of the warmed-up lane, a
fresh process with memory of its own as a pytest subprocess has, which runs pytest in-process
and exits. The student's code still runs only in the sandboxed worker the run starts.

The examples a run records for replay (``grader.grading.replay``) come back to the lane over a
pipe and stay in its memory, so the next submission replays them, secret seed or not: they
are never written to disk.

Protocol (the batch's ``Lane`` and ``python -I -m grader.workflows.lane``): one JSON request
per line on stdin, ``{"args": [pytest arguments], "cwd": folder}``; one JSON reply per line on
stdout, ``{"returncode": n, "recordings": how many the lane holds}``. The run's output is in
``cwd/pytest.out``.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
from pathlib import Path

import pytest

from grader.grading import replay
from grader.workflows.api import grading_environment, in_subprocess

OUTPUT = "pytest.out"


def _run_forked(args: list[str], cwd: str) -> int:
    """Fork; the child runs pytest on ``args`` in ``cwd`` and hands back what it recorded."""
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:  # the grading run
        code = 3
        try:
            os.close(readable)
            os.chdir(cwd)
            out = os.open(OUTPUT, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(out, 1)
            os.dup2(out, 2)
            code = int(pytest.main(args))
            with os.fdopen(writable, "w") as pipe:
                json.dump(replay.FRESH, pipe)
        finally:
            os._exit(code)
    os.close(writable)
    with os.fdopen(readable) as pipe:
        fresh = pipe.read()
    _, status = os.waitpid(pid, 0)
    with contextlib.suppress(ValueError):
        replay.MEMORY.update(json.loads(fresh))
    return os.waitstatus_to_exitcode(status)


def serve() -> None:
    """The lane process: warm up, then one forked grading run per request."""
    import hypothesis.extra.pytestplugin  # noqa: F401 - imported once, for every fork

    import grader.grading.plugin  # noqa: F401

    for line in sys.stdin:
        request = json.loads(line)
        returncode = _run_forked(request["args"], request["cwd"])
        print(json.dumps({"returncode": returncode, "recordings": len(replay.MEMORY)}),
              flush=True)


class Lane:
    """The batch's handle on one lane process: runs grading commands as ``api.in_subprocess``
    does, in a fork of the warm lane. A lane that dies is replaced; that run falls back to a
    fresh subprocess, so no submission's grade is lost to it."""

    def __init__(self) -> None:
        self._process = self._start()
        self.recordings = 0
        """How many tests' examples the lane process holds in memory, as of its last run."""

    @staticmethod
    def _start() -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-I", "-m", "grader.workflows.lane"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                env=grading_environment(), text=True)

    def __call__(self, command: list[str], workdir: Path) -> tuple[int, str]:
        args = command[command.index("pytest") + 1:]
        requests, replies = self._process.stdin, self._process.stdout
        try:
            requests.write(json.dumps({"args": args, "cwd": str(workdir)}) + "\n")
            requests.flush()
            reply = json.loads(replies.readline())
        except (OSError, ValueError):
            self.close()
            self._process = self._start()
            return in_subprocess(command, workdir)
        self.recordings = reply["recordings"]
        output = workdir / OUTPUT
        return reply["returncode"], output.read_text(errors="replace") if output.exists() else ""

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self._process.stdin is not None:
                self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


class Lanes:
    """A pool of warm lanes shared by a batch's threads: a grading command takes a free one."""

    def __init__(self, count: int) -> None:
        self._free: queue.Queue[Lane] = queue.Queue()
        self._all = [Lane() for _ in range(count)]
        for lane in self._all:
            self._free.put(lane)

    def __call__(self, command: list[str], workdir: Path) -> tuple[int, str]:
        lane = self._free.get()
        try:
            return lane(command, workdir)
        finally:
            self._free.put(lane)

    def __enter__(self) -> Lanes:
        return self

    def __exit__(self, *exc: object) -> None:
        for lane in self._all:
            lane.close()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C in a batch: the batch says so
        serve()
