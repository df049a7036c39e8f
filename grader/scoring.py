"""From test outcomes to item scores: partial credit, statuses, dependencies, feedback."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from grader.rubric import Item, Rubric

FAILING = ("missing", "timeout", "error", "failed")


@dataclass
class TestOutcome:
    """What one grading test found (recorded by the plugin in the trusted process)."""

    item: str
    name: str
    weight: float
    passed: bool
    status: str = "passed"
    reason: str = ""
    details: list[str] = field(default_factory=list)
    snippet: str = ""
    bugs: list[str] = field(default_factory=list)
    figure: dict[str, Any] | None = None
    """The counterexample graph's picture data (``grader.figures``), where there is one."""


@dataclass
class ItemResult:
    id: str
    assignment: str
    title: str
    score: float
    max_score: float
    extra_credit: bool
    visibility: str
    status: str
    bugs: list[str]
    feedback: str
    reason: str = ""
    figure: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _status(outcomes: list[TestOutcome]) -> str:
    failing = [o.status for o in outcomes if not o.passed]
    if not failing:
        return "passed"
    if len(failing) < len(outcomes):
        return "partial"
    return next(s for s in FAILING if s in failing)


def _feedback(item: Item, outcomes: list[TestOutcome], failed_deps: list[str]) -> str:
    lines = []
    if failed_deps:
        lines.append(f"Fix {', '.join(failed_deps)} first: this item uses it.")
    for outcome in outcomes:
        if outcome.passed:
            continue
        lines.append(f"{outcome.name}: {outcome.reason}")
        lines += outcome.details
        if outcome.snippet:
            lines += ["Smallest example (runnable):", "```python", outcome.snippet, "```"]
        lines += [f"Recognised bug: {bug}" for bug in outcome.bugs]
    if lines and item.hint:
        lines.append(f"Hint: {item.hint}")
    return "\n".join(lines)


def score_items(rubric: Rubric, items: list[Item], outcomes: list[TestOutcome]
                ) -> list[ItemResult]:
    by_item: dict[str, list[TestOutcome]] = {}
    for outcome in outcomes:
        by_item.setdefault(outcome.item, []).append(outcome)
    statuses = {item.id: _status(by_item.get(item.id, [])) for item in items}
    results = []
    for item in items:
        mine = by_item.get(item.id, [])
        total = sum(o.weight for o in mine) or 1.0
        earned = sum(o.weight for o in mine if o.passed)
        status = statuses[item.id]
        fraction = earned / total if item.partial_credit or status == "passed" else 0.0
        if not mine:
            status, fraction = "error", 0.0
        failed_deps = [] if status == "passed" else [
            d for d in item.depends_on if statuses.get(d, "passed") != "passed"]
        first = next((o for o in mine if not o.passed), None)
        results.append(ItemResult(
            id=item.id, assignment=item.assignment, title=item.title,
            score=round(item.points * fraction, 4), max_score=item.points,
            extra_credit=item.extra_credit, visibility=item.visibility, status=status,
            bugs=sorted({b.split(":")[0] for o in mine for b in o.bugs}),
            feedback=_feedback(item, mine, failed_deps) if mine else "no grading test ran",
            reason=first.reason if first else ("" if mine else "no grading test ran"),
            figure=first.figure if first else None,
        ))
    return results


def totals(results: list[ItemResult]) -> tuple[float, float]:
    """Extra credit counts in the score but not in the maximum."""
    score = sum(r.score for r in results)
    maximum = sum(r.max_score for r in results if not r.extra_credit)
    return round(score, 4), round(maximum, 4)
