"""The batch's memory: one JSON file per graded submission, so a rerun redoes only what changed.

An entry's file name is the digest of everything that determines its grade: the submission's
content, the rubric, the seed, the grader's version and which items were graded. A changed
input is a different key, so it is graded again; the same input is never graded twice. Only
the parent writes entries, each atomically, the moment its result is known: an interrupted
batch keeps everything finished before the interruption. The seed itself is never stored.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from grader.atomic import write_atomically

SCHEMA = 1


@dataclass(frozen=True)
class Key:
    """What a grade depends on, besides the grader's code (its version stands for that)."""

    content: str
    rubric: str
    seed: int | None
    version: str
    assignment: str
    only: tuple[str, ...]

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()


class Ledger:
    """A folder of ``<key digest>.json`` entries."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: Key) -> Path:
        return self.folder / f"{key.digest}.json"

    def get(self, key: Key) -> dict[str, Any] | None:
        """The entry for ``key``, or None (also for an unreadable or foreign file)."""
        try:
            entry = json.loads(self._path(key).read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("schema") != SCHEMA \
                or entry.get("key") != key.digest:
            return None
        return entry

    def put(self, key: Key, entry: dict[str, Any]) -> None:
        write_atomically(self._path(key), json.dumps(
            {"schema": SCHEMA, "key": key.digest, **entry}, indent=1, sort_keys=True))
