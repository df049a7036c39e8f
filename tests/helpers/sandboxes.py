"""Workers the sandbox's tests start on fake runners (tests/sandbox_fixtures/): a factory that
starts them on slots of their own, and checks that no process of theirs survives."""

from __future__ import annotations

import itertools
import os
import sys
import time
import uuid
from pathlib import Path

from grader.sandbox import launch, proctree
from grader.sandbox.launch import Limits, Worker
from tests.helpers import REPO_ROOT, SANDBOX_FIXTURES
from tests.helpers.processes import processes_with

FIXTURES = SANDBOX_FIXTURES
CHAOS = FIXTURES / "chaos.py"
ECHO = FIXTURES / "echo.py"
FRAMING = REPO_ROOT / "grader" / "sandbox" / "framing.py"
VENV = Path(sys.prefix)
SITE = Path(next(p for p in sys.path if p.endswith("site-packages")))
SITES = [Path(p) for p in sys.path if p.endswith("site-packages")]
"""numpy's too, where a worktree's virtualenv reaches another's packages."""
ZYGOTE = [REPO_ROOT / "grader" / "__init__.py", REPO_ROOT / "grader" / "sandbox" / "__init__.py"]
ZYGOTE.append(REPO_ROOT / "grader" / "sandbox" / "zygote.py")
"""What a zygote (``grader.sandbox.zygote``) imports, so that the workers here are forked."""
SYSTEM_PYTHON = Path("/usr/bin/python3")
IS_ROOT = os.geteuid() == 0
SMALL = Limits(memory_mb=1024)


def _own_slots() -> range:
    """This process's own worker slots, high above the grading runs' (which search upwards
    from 0, 40, 100, 200). Each xdist worker gets its own share, so one's check that no
    process of a uid survives never sees another's live worker on that uid."""
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    index = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    size = 100 // count
    return range(900 + index * size, 900 + (index + 1) * size)


_slots = itertools.cycle(_own_slots())


def processes_of_uid(uid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/status") as fh:
                    status = dict(line.split(":", 1) for line in fh if ":" in line)
            except OSError:
                continue
            if int(status["Uid"].split()[0]) == uid and status["State"].strip()[0] != "Z":
                found.append(int(name))
    return found


def eventually(check, timeout: float = 30.0):
    """``check()`` once it is truthy, or its last value after ``timeout`` s: the wait ends as
    soon as the check holds, so a long timeout costs nothing and leaves room for a loaded
    machine."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


class Factory:
    def __init__(self, tmp_path: Path) -> None:
        self.token = f"sandbox-test-{uuid.uuid4().hex}"
        self.tmp = tmp_path
        self.submission = tmp_path / "submission"
        self.submission.mkdir()
        (self.submission / "engine.py").write_text("VALUE = 42\n")
        self.workers: list[Worker] = []

    def __call__(
        self,
        mode: str,
        *,
        limits: Limits = SMALL,
        readable=(),
        hidden=(),
        python: Path | str = sys.executable,
        script: Path = CHAOS,
        submission: Path | None = None,
        slot: int | None = None,
    ) -> Worker:
        worker = launch.worker_in_free_slot(  # free: another run on this machine may hold one
            [str(python), "-I", str(script), self.token],
            first_slot=self.slot() if slot is None else slot,
            submission=submission or self.submission,
            readable=[VENV, *SITES, FIXTURES, FRAMING, *ZYGOTE, *readable],
            hidden=list(hidden),
            limits=limits,
            sandbox=mode,
        )
        self.workers.append(worker)
        assert mode == "auto" or worker.mode == mode
        return worker

    @staticmethod
    def slot() -> int:
        """The next of this process's own slots."""
        return next(_slots)

    def zygotes(self) -> set[int]:
        """The processes of the live zygotes themselves (bubblewrap, its init, the zygote, with
        the token on their command line, as their forks have), not their workers."""
        found: set[int] = set()
        for worker in self.workers:
            for zygote in worker._resources.zygotes:
                if zygote.pid is not None:
                    inside = proctree.process_tree(zygote.pid)
                    found |= set(proctree.process_tree(zygote.proc.pid)) - set(inside[1:])
        return found

    def survivors(self) -> list[int]:
        left = [pid for pid in processes_with(self.token) if pid not in self.zygotes()]
        for worker in self.workers:
            if worker.uid is not None:
                left += processes_of_uid(worker.uid)
        return left

    def assert_none_left(self) -> None:
        assert eventually(lambda: not self.survivors()), f"left behind: {self.survivors()}"
