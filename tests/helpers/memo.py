"""Grades the suite asked for before, kept for the rest of the run.

Several tests grade the very same upload with the very same options (a course's planted bug
is graded once to see what it costs, once to replay the examples it shows). A grade is a
function of the upload's files and the options (``tests.same_grades`` proves it byte for byte,
and a lane's replayed grade is the fresh one), so the second test reads the first one's report.
Only grades that replay from a lane's memory are kept: a test that grades without replay, or
into a recordings folder, asks about what a grade does, not only what it gives.

The reports are files in a folder every pytest-xdist worker of the run shares; a worker that
asks for a grade another is working out waits for it (a lock per grade) instead of grading it
again.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

SKIPPED = {"__pycache__", ".pytest_cache", ".hypothesis"}

folder: Path | None = None
"""Where this run keeps its grades (set by the suite's conftest); None: nothing is kept."""


def tree_digest(root: Path) -> str:
    """The digest of every file under ``root`` (names and bytes), whatever folder holds it."""
    digest = hashlib.sha256()
    if root.is_file():
        digest.update(root.read_bytes())
        return digest.hexdigest()
    for path in sorted(root.rglob("*")):
        if SKIPPED.intersection(path.relative_to(root).parts) or not path.is_file():
            continue
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def key_of(*parts: object) -> str:
    """A grade's key: files by their digest, everything else by its repr."""
    words = [tree_digest(part) if isinstance(part, Path) else repr(part) for part in parts]
    return hashlib.sha256("\0".join(words).encode()).hexdigest()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def kept(key: str, work: Callable[[], T]) -> T:
    """``work()``'s result, worked out once per run for ``key``."""
    if folder is None:
        return work()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.pickle"
    with _locked(folder / f"{key}.lock"):
        if path.is_file():
            return pickle.loads(path.read_bytes())
        result = work()
        partial = path.with_suffix(f".{os.getpid()}")
        partial.write_bytes(pickle.dumps(result))
        partial.replace(path)
        return result
