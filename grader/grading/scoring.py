"""From test outcomes to item scores: partial credit, statuses, dependencies, feedback."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

from grader.grading.rubric import Item, Rubric
from grader.language.editions import NOT_IN_EDITION, Edition

FAILING = ("missing", "timeout", "error", "failed")
NOT_GRADABLE = "not_gradable"
"""A test that could not grade its item because another item fails (``NotGradable``): it
does not count, and its share of the item goes to the tests that ran. An item none of whose
tests could be graded has this status and scores 0: code that does nothing earns nothing."""
NEVER_RAN = "no grading test ran"
"""The reason of an item no grading test reached: not a result, so its grade is an error
(``grading.completeness``), never a 0."""


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
    """The counterexample graph's picture data (``grader.checks.figures``), where there is one."""


class Failure(TypedDict):
    """One failing test's verdict, as fields every report renders without parsing. A typed
    dict: it is its own JSON form, and callers compare it with plain dicts."""

    test: str
    reason: str
    details: list[str]
    snippet: str
    bugs: list[str]


class Waiting(TypedDict):
    """A test that could not be graded yet (``NOT_GRADABLE``), and why: which items must
    pass first."""

    test: str
    reason: str


@dataclass
class ItemResult:
    """One rubric item's result. It crosses processes as JSON (``to_json``: the grading process
    writes it, the ledger keeps it) and is read back as an object (``from_json``)."""

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
    failures: list[Failure] = field(default_factory=list)
    fix_first: list[str] = field(default_factory=list)
    """Items this one depends on that fail too."""
    hint: str = ""
    not_gradable: list[Waiting] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ItemResult:
        """The inverse of ``to_json``: a field this version lacks or a required one missing is
        a ``TypeError``, never a silently wrong item."""
        return cls(**data)


def _status(item: Item, outcomes: list[TestOutcome]) -> str:
    """``error`` when no test ran; ``not_gradable`` when none could be graded; else from the
    tests that were graded: ``partial`` only where some passed and partial credit counts (all
    or nothing: the worst failing status)."""
    if not outcomes:
        return "error"
    outcomes = [o for o in outcomes if o.status != NOT_GRADABLE]
    if not outcomes:
        return NOT_GRADABLE
    failing = [o.status for o in outcomes if not o.passed]
    if not failing:
        return "passed"
    if item.partial_credit and len(failing) < len(outcomes):
        return "partial"
    return next(s for s in FAILING if s in failing)


def _failures(outcomes: list[TestOutcome]) -> list[Failure]:
    """Each failing test's verdict as fields, so every report renders it without parsing."""
    return [
        {
            "test": o.name,
            "reason": o.reason,
            "details": list(o.details),
            "snippet": o.snippet,
            "bugs": list(o.bugs),
        }
        for o in outcomes
        if not o.passed and o.status != NOT_GRADABLE
    ]


def _not_gradable(outcomes: list[TestOutcome]) -> list[Waiting]:
    return [{"test": o.name, "reason": o.reason} for o in outcomes if o.status == NOT_GRADABLE]


def not_gradable_note(not_gradable: Sequence[Waiting], graded: bool) -> list[str]:
    """What the feedback says of the tests that could not be graded (none: nothing)."""
    if not not_gradable:
        return []
    return [
        *(f"{t['test']}: {t['reason']}" for t in not_gradable),
        "(A test that is not gradable yet does not count: the item is scored on the tests "
        "that ran.)"
        if graded
        else "(No test of this item could be graded yet: it scores 0 until then.)",
    ]


def _same_failures(failures: Sequence[Failure]) -> list[tuple[list[str], Failure]]:
    """The failures with the same verdict (reason, details, example, bugs) together, in the
    order each verdict first appears: an engine that lacks a part the course's API asks for
    is told so once, with every test it stopped, not once per test."""
    groups: dict[str, tuple[list[str], Failure]] = {}
    for failure in failures:
        key = json.dumps({k: v for k, v in failure.items() if k != "test"}, sort_keys=True)
        groups.setdefault(key, ([], failure))[0].append(failure["test"])
    return list(groups.values())


def feedback_text(
    fix_first: list[str], failures: Sequence[Failure], hint: str, not_gradable: Sequence[str] = ()
) -> str:
    """The feedback as plain text (terminal, Markdown, JSON, Gradescope); ``not_gradable``:
    ``not_gradable_note``'s lines."""
    lines = []
    if fix_first:
        lines.append(f"Fix {', '.join(fix_first)} first: this item uses it.")
    for tests, failure in _same_failures(failures):
        lines.append(f"{', '.join(tests)}: {failure['reason']}")
        lines += failure["details"]
        if failure["snippet"]:
            lines += ["Smallest example (runnable):", "```python", failure["snippet"], "```"]
        lines += [f"Recognised bug: {bug}" for bug in failure["bugs"]]
    if lines and hint:
        lines.append(f"Hint: {hint}")
    lines += not_gradable
    return "\n".join(lines)


def not_in_edition(item: Item, edition: Edition) -> ItemResult:
    """An item the submission's edition does not have: 0 of 0 points, and saying why."""
    why = edition.feedback(item.title)
    return ItemResult(
        id=item.id,
        assignment=item.assignment,
        title=item.title,
        score=0.0,
        max_score=0.0,
        extra_credit=item.extra_credit,
        visibility=item.visibility,
        status=NOT_IN_EDITION,
        bugs=[],
        feedback=why,
        reason=why,
    )


def score_items(
    rubric: Rubric,
    items: list[Item],
    outcomes: list[TestOutcome],
    editions: Mapping[str, Edition] | None = None,
) -> list[ItemResult]:
    """Each item's result from its tests' outcomes; ``editions``: the items the submission's
    edition does not have (``not_in_edition``), by id, with that edition."""
    editions = editions or {}
    by_item: dict[str, list[TestOutcome]] = {}
    for outcome in outcomes:
        by_item.setdefault(outcome.item, []).append(outcome)
    statuses = {item.id: _status(item, by_item.get(item.id, [])) for item in items}
    results = []
    for item in items:
        if item.id in editions:
            results.append(not_in_edition(item, editions[item.id]))
            continue
        mine = by_item.get(item.id, [])
        graded = [o for o in mine if o.status != NOT_GRADABLE]
        total = sum(o.weight for o in graded)
        earned = sum(o.weight for o in graded if o.passed)
        status = statuses[item.id]
        whole = float(status == "passed")
        fraction = earned / total if item.partial_credit and total else whole
        failed_deps = (
            []
            if status == "passed"
            else [d for d in item.depends_on if statuses.get(d, "passed") != "passed"]
        )
        first = next(
            (o for o in graded if not o.passed),
            next((o for o in mine if o.status == NOT_GRADABLE), None),
        )
        failures = _failures(mine)
        waiting = _not_gradable(mine)
        hint = item.hint if failures or failed_deps else ""
        results.append(
            ItemResult(
                id=item.id,
                assignment=item.assignment,
                title=item.title,
                score=round(item.points * fraction, 4),
                max_score=item.points,
                extra_credit=item.extra_credit,
                visibility=item.visibility,
                status=status,
                bugs=sorted({b.split(":")[0] for o in mine for b in o.bugs}),
                feedback=(
                    feedback_text(
                        failed_deps, failures, hint, not_gradable_note(waiting, bool(graded))
                    )
                    if mine
                    else NEVER_RAN
                ),
                reason=first.reason if first else ("" if mine else NEVER_RAN),
                figure=first.figure if first else None,
                failures=failures,
                fix_first=failed_deps,
                hint=hint,
                not_gradable=waiting,
            )
        )
    return results
