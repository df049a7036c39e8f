"""One assignment's part of a grade report: its items as objects, its score and its maximum,
and how points are written.

Every report shows a score over a maximum, per assignment and in total, and the maximum leaves
extra credit out (so a student can score above it). Both are summed here, once, for every
renderer; the report's total is the same view over all its items.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.grading.scoring import ItemResult


@dataclass(frozen=True)
class AssignmentView:
    """The items of ``assignment`` (for the report's total: of every assignment graded)."""

    assignment: str
    items: tuple[ItemResult, ...]

    @property
    def score(self) -> float:
        """The points earned, extra credit included, to 4 decimals as every report shows it."""
        return round(sum(item.score for item in self.items), 4)

    @property
    def unrounded_maximum(self) -> float:
        """The points available without extra credit, as summed: the terminal table prints it
        so, where the documents print ``maximum``."""
        return sum(item.max_score for item in self.items if not item.extra_credit)

    @property
    def maximum(self) -> float:
        """The points available without extra credit, to 4 decimals (the documents' maximum)."""
        return round(self.unrounded_maximum, 4)


def points(value: float) -> str:
    """A number of points as every report writes it (``6``, ``2.5``)."""
    return f"{value:g}"


def item_points(item: ItemResult) -> str:
    """An item's cell in a score table: ``3/6``, or ``5/5 (extra)`` for extra credit."""
    extra = " (extra)" if item.extra_credit else ""
    return f"{points(item.score)}/{points(item.max_score)}{extra}"
