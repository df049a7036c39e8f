"""Processes a test starts: a snippet run as a student runs it (and whether a shown example
replays so), and those found by a token on their command line, so that whatever the machine's
speed a test can say none of them is left."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from grader.grading.reproduce import PRINTS_ALIKE_NOTE


def processes_with(token: str) -> list[int]:
    """The ids of the processes whose command line holds ``token``."""
    needle = token.encode()
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as fh:
                    if needle in fh.read():  # a zombie's cmdline is empty
                        found.append(int(name))
            except OSError:
                pass
    return found


SNIPPET_CPU_SECONDS = 10
"""CPU seconds a replay may spend: one that runs out hangs where the reference finishes (a walk
that revisits shared nodes on the diamonds), which shows the failure. A limit on CPU, not on
time, so a loaded machine does not stop a reference's replay (it spends a fraction of a second)
and a hang costs the suite seconds, not a minute."""
SNIPPET_TIMEOUT = 120
"""Wall seconds, for a replay that waits rather than computes."""


def _limit_cpu() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (SNIPPET_CPU_SECONDS, SNIPPET_CPU_SECONDS))


def as_a_student(snippet: str, folder: Path) -> tuple[int | None, str]:
    """``snippet`` run in a fresh interpreter in ``folder``: its exit code and output (the
    exit code is ``-SIGXCPU`` past the CPU limit, None past the wall limit)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", snippet],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=SNIPPET_TIMEOUT,
            preexec_fn=_limit_cpu,
        )
    except subprocess.TimeoutExpired:
        return None, ""
    return done.returncode, done.stdout


def unexplained(snippet: str, details: list[str], engine: Path, reference: Path) -> str | None:
    """What is wrong with a shown example, run as a student runs it in ``engine``'s folder and
    in ``reference``'s: it must print something else than the reference prints exactly where
    its feedback does not say it prints alike (``reproduce.PRINTS_ALIKE_NOTE``). None: right."""
    says_alike = PRINTS_ALIKE_NOTE in details
    if (as_a_student(snippet, engine) != as_a_student(snippet, reference)) != says_alike:
        return None
    if says_alike:
        return "its example says it prints what the reference prints"
    return "its example prints what the reference prints, and does not say so"
