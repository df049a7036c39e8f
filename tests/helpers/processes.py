"""Processes a test started, found by a token on their command line: whatever the machine's
speed, a test can say none of them is left."""

from __future__ import annotations

import os


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
