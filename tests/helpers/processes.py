"""Processes a test starts: a snippet run as a student runs it, and those found by a token on
their command line, so that whatever the machine's speed a test can say none of them is left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


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


SNIPPET_TIMEOUT = 60
"""Seconds a replay may take: one that runs out hangs where the reference finishes (a walk that
revisits shared nodes on the diamonds), which shows the failure."""


def as_a_student(snippet: str, folder: Path) -> tuple[int | None, str]:
    """``snippet`` run in a fresh interpreter in ``folder``: its exit code and output (None:
    it ran out of time)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", snippet],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=SNIPPET_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return None, ""
    return done.returncode, done.stdout
