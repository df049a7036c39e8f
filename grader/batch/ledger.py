"""The batch's memory: one JSON file per graded submission, so a rerun redoes only what changed.

An entry's file name is the digest of everything that determines its grade (``Key``): the
submission's content, what the rubric grades (its points only rescale a stored grade), the
seed, which items were graded, the grader's own source, the reference solutions, the oracles a
grade may ask, and the versions of what decides the draw. A changed input is a different key,
so it is graded again: a grade made by another grader, reference or rubric is never reused. The
same input is never graded twice. Only the parent writes entries, each atomically, the moment
its result is known: an interrupted batch keeps everything finished before the interruption.
The seed itself is never stored.
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
    """Everything a grade depends on: when any of it changes, the stored grade is stale."""

    content: str
    """The upload (``submissions.content_hash``)."""
    rubric: str
    """What the rubric grades (``Rubric.graded_digest``): not its points, which a stored
    result is rescored at."""
    seed: int | None
    """Only ever stored inside ``digest``."""
    assignment: str
    only: tuple[str, ...]
    grader: str
    """The grader's own source (``layout.grader_digest``): a fixed check changes grades, while
    ``__version__`` is a label nobody bumps."""
    reference: str | None
    """The reference solutions' content (None: graded without them); the primary oracle."""
    oracles: tuple[str, ...]
    """The oracles a grade may ask besides finite differences, e.g. ``("reference",
    "pytorch 2.4.1")``: PyTorch confirms verdicts where it is allowed and installed."""
    libraries: tuple[str, ...]
    """Hypothesis, numpy and Python versions: what Hypothesis draws for a seed depends on them."""
    limits: tuple[float | None, int]
    """The import budget and the worker's memory: a tighter limit can time out or exhaust an
    engine that passed under the old one."""

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
        if (
            not isinstance(entry, dict)
            or entry.get("schema") != SCHEMA
            or entry.get("key") != key.digest
        ):
            return None
        return entry

    def put(self, key: Key, entry: dict[str, Any]) -> None:
        write_atomically(
            self._path(key),
            json.dumps({"schema": SCHEMA, "key": key.digest, **entry}, indent=1, sort_keys=True),
        )
