"""A course's editions: the years its homework changed, told apart from the upload.

needle's homework 1 of 2022 keeps its ops in ``python/needle/ops.py`` and has no ``EWisePow``;
from 2023 they live in ``python/needle/ops/ops_mathematic.py`` and ``EWisePow`` is there. A
student graded on an op their edition never asked for would lose points for the year they took
the course: an op the detected edition lacks is not graded, and is not in the total (the item is
reported "not in this edition", 0 of 0 points).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

NOT_IN_EDITION = "not_in_edition"
"""The status of an item whose op the submission's edition does not have."""


@dataclass(frozen=True)
class Edition:
    """One edition of an assignment (a profile's ``editions:``)."""

    name: str
    marker: str
    """A file, relative to the package's folder, that only this edition's layout has."""
    lacks: tuple[str, ...] = ()
    """The ops of the profile's list this edition's homework does not have."""

    def feedback(self, title: str) -> str:
        """What the report says of an item this edition does not have."""
        return (
            f"not in this edition: {title} is not part of the {self.name} homework (its "
            f"upload has {self.marker}), so it is neither graded nor counted in the total"
        )


def detected(editions: Iterable[Edition], package: Path) -> Edition | None:
    """The first edition whose marker file ``package`` (the package's folder) holds."""
    return next((e for e in editions if (package / e.marker).is_file()), None)
