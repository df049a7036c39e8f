"""Results are written in one step: a reader sees the old file or the new one, never half; and
a folder of such files written one after another keeps only its newest."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, text: str, mode: int = 0o644) -> None:
    """Replace ``path`` with ``text`` via a temporary file and ``os.replace``. ``mode``: a
    report is read by a web server or a colleague (mkstemp's 0600 would keep them out); the
    grader's caches, which hold the reference's answers and the examples a seed draws, pass
    0o600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.fchmod(fd, mode)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.replace(temp, path)


def keep_newest(kept: Path, pattern: str, count: int) -> None:
    """Of the files in ``kept``'s folder that match ``pattern``, keep ``kept`` and the newest
    others, ``count`` in all: a folder written to at every grade does not fill the disk. One
    that cannot be listed or emptied is left as it is."""
    try:
        older = sorted(
            (p for p in kept.parent.glob(pattern) if p != kept),
            key=lambda p: p.stat().st_mtime_ns,
        )
        for path in older[: max(0, len(older) + 1 - count)]:
            path.unlink(missing_ok=True)
    except OSError:
        return
