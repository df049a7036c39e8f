"""From test outcomes to item scores: partial credit, statuses, dependencies, feedback."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, TypedDict

from grader.grading.rubric import Item, Rubric
from grader.language.editions import NOT_IN_EDITION, Edition

MISSING = "missing"
"""The status of a test that found code not written: the stubs' ``NotImplementedError``, or an
attribute the engine does not have (``grader.worker.runner.describe``)."""
FAILING = (MISSING, "timeout", "error", "failed")
"""The statuses of a failing test, in precedence: an item whose tests fail in several ways
takes the first of them (``_status``)."""
NOT_GRADABLE = "not_gradable"
"""A test that could not grade its item because other items fail (``NotGradable``: its
``needs``). Where one of them is missing (not written: the stubs' ``NotImplementedError``, an
absent attribute) in partial work (``unwritten``: two items of the assignment or more), the
test earns nothing: partial work earns only what it shows. Where all of them are written but
wrong, or the one missing function of an engine otherwise whole, it does not count, and its
share of the item goes to the tests that ran: a bug costs its own item, not the items that
use it. An item none of whose tests
could be graded has this status and scores 0: code that does nothing earns nothing; so has a
composite item whose own tests pass while an item it depends on fails."""
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
    """The counterexample graph's picture data (``grader.language.figures``), where there is one."""
    needs: list[str] = field(default_factory=list)
    """A test not gradable yet: the items it waits on (``NotGradable.needs``)."""


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
    missing: list[str]
    """The items it waits on that are not written yet: then it counts, and earns nothing."""


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
    credit: float = 0.0
    """The share of ``max_score`` earned, unrounded: a change of points alone rescores it
    (``rescored``) without grading again."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ItemResult:
        """The inverse of ``to_json``: a field this version lacks or a required one missing is
        a ``TypeError``, never a silently wrong item."""
        return cls(**data)


def item_of(need: str) -> str:
    """The item a ``NotGradable`` need names: ``micrograd.ops.relu (away from 0)`` is
    ``micrograd.ops.relu``."""
    return need.split(" (", 1)[0]


def unwritten(by_item: Mapping[str, list[TestOutcome]], items: Sequence[Item]) -> set[str]:
    """Items some of whose code is not written yet, where that makes the engine partial work:
    a test of theirs found it missing, and so did a test of another item of the assignment
    that is not a composite (a composite's graphs meet whatever is missing). One function left
    unwritten in an engine otherwise whole is one mistake, which costs its own item alone (a
    test waiting on it does not count, as one waiting on code written but wrong); from two on,
    the tests waiting on them count and earn nothing."""
    composites = {item.id for item in items if item.depends_on}
    missing = [item for item, mine in by_item.items() if any(o.status == MISSING for o in mine)]
    per_assignment = Counter(item.split(".", 1)[0] for item in missing if item not in composites)
    return {item for item in missing if per_assignment[item.split(".", 1)[0]] > 1}


def _waits_on(outcome: TestOutcome, missing: set[str]) -> list[str]:
    """The items a not-gradable test waits on that are not written yet."""
    return list(dict.fromkeys(item_of(n) for n in outcome.needs if item_of(n) in missing))


@dataclass
class _Tests:
    """One item's tests, by how they count."""

    graded: list[TestOutcome]
    waiting: list[TestOutcome]
    """Not gradable, waiting on items that are written but wrong: they do not count."""
    unwritten: list[TestOutcome]
    """Not gradable, waiting on an item not written yet: they count, and earn nothing."""

    @classmethod
    def of(cls, outcomes: list[TestOutcome], missing: set[str]) -> _Tests:
        graded = [o for o in outcomes if o.status != NOT_GRADABLE]
        stopped = [o for o in outcomes if o.status == NOT_GRADABLE]
        return cls(
            graded,
            [o for o in stopped if not _waits_on(o, missing)],
            [o for o in stopped if _waits_on(o, missing)],
        )

    @property
    def counted(self) -> list[TestOutcome]:
        return [*self.graded, *self.unwritten]

    def fraction(self) -> float:
        """The weighted share of the counted tests that passed (all of weight 0: 1)."""
        total = sum(o.weight for o in self.counted)
        return sum(o.weight for o in self.graded if o.passed) / total if total else 1.0


def _status(item: Item, tests: _Tests) -> str:
    """``not_gradable`` when no test counts (none was graded, none waits on code not
    written); else from the counted tests: ``passed`` when each passed, ``partial`` where some
    passed and partial credit counts, else the worst failing status (a test waiting on code
    not written counts as ``not_gradable``, after every other)."""
    counted = tests.counted
    if not counted:
        return NOT_GRADABLE
    failing = [o.status for o in tests.graded if not o.passed]
    failing += [NOT_GRADABLE] * len(tests.unwritten)
    if not failing:
        return "passed"
    if item.partial_credit and len(failing) < len(counted):
        return "partial"
    return next((s for s in FAILING if s in failing), NOT_GRADABLE)


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


def _not_gradable(outcomes: list[TestOutcome], missing: set[str]) -> list[Waiting]:
    """The tests not gradable yet, in the order they ran, each with the items it waits on
    that are not written yet (none: they are written, but wrong)."""
    return [
        {"test": o.name, "reason": o.reason, "missing": _waits_on(o, missing)}
        for o in outcomes
        if o.status == NOT_GRADABLE
    ]


def graded_any(result: ItemResult) -> bool:
    """Did any test of the item count (``not_gradable_note``), read back from its result?"""
    return (
        result.status != NOT_GRADABLE
        or bool(result.fix_first)
        or any(t.get("missing") for t in result.not_gradable)
    )


WAITING_NOTE = (
    "(A test waiting on an item that is written but wrong does not count: the item is "
    "scored on the tests that ran.)"
)
UNWRITTEN_NOTE = "(A test waiting on code not written yet counts, and earns nothing until then.)"
NONE_GRADED_NOTE = "(No test of this item could be graded yet: it scores 0 until then.)"


def not_gradable_note(not_gradable: Sequence[Waiting], graded: bool) -> list[str]:
    """What the feedback says of the tests that could not be graded (none: nothing): each
    reason once, with every test it stopped, then how they count."""
    if not not_gradable:
        return []
    by_reason: dict[str, list[str]] = {}
    for test in not_gradable:
        why = test["reason"]
        if test.get("missing"):
            why += f" ({', '.join(test['missing'])}: not written yet)"
        by_reason.setdefault(why, []).append(test["test"])
    lines = [f"{', '.join(tests)}: {why}" for why, tests in by_reason.items()]
    if not graded:
        return [*lines, NONE_GRADED_NOTE]
    if any(t.get("missing") for t in not_gradable):
        lines.append(UNWRITTEN_NOTE)
    if any(not t.get("missing") for t in not_gradable):
        lines.append(WAITING_NOTE)
    return lines


def _same_failures(failures: Sequence[Failure]) -> list[tuple[list[str], Failure]]:
    """The failures with the same verdict (reason, details, example, bugs) together, in the
    order each verdict first appears: an engine that lacks a part the course's API asks for
    is told so once, with every test it stopped, not once per test."""
    groups: dict[str, tuple[list[str], Failure]] = {}
    for failure in failures:
        key = json.dumps({k: v for k, v in failure.items() if k != "test"}, sort_keys=True)
        groups.setdefault(key, ([], failure))[0].append(failure["test"])
    return list(groups.values())


def fix_first_line(fix_first: Sequence[str]) -> str:
    """What a composite item whose dependencies fail says first, and why it scores 0."""
    one = len(fix_first) == 1
    return (
        f"Fix {', '.join(fix_first)} first: this item uses {'it' if one else 'them'}, "
        f"and scores 0 until {'it passes' if one else 'they pass'}."
    )


def feedback_text(
    fix_first: list[str], failures: Sequence[Failure], hint: str, not_gradable: Sequence[str] = ()
) -> str:
    """The feedback as plain text (terminal, Markdown, JSON, Gradescope); ``not_gradable``:
    ``not_gradable_note``'s lines."""
    lines = [fix_first_line(fix_first)] if fix_first else []
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


def rescored(result: ItemResult, points: float) -> ItemResult:
    """``result`` as it scores where its item is worth ``points`` (itself where it is worth
    them already; an item not in the edition stays at 0 of 0)."""
    if result.status == NOT_IN_EDITION or result.max_score == points:
        return result
    return replace(result, score=round(points * result.credit, 4), max_score=points)


def score_items(
    rubric: Rubric,
    items: list[Item],
    outcomes: list[TestOutcome],
    editions: Mapping[str, Edition] | None = None,
) -> list[ItemResult]:
    """Each item's result from its tests' outcomes; ``editions``: the items the submission's
    edition does not have (``not_in_edition``), by id, with that edition.

    An item with ``depends_on`` (a composite: ``*.graphs``) scores 0 while any item it depends
    on fails, whatever its own tests showed: what a bug in one part costs does not depend on
    whether the seed's graphs happened to use that part. Items not scored in this run, and
    those the edition lacks, count as passing."""
    editions = editions or {}
    by_item: dict[str, list[TestOutcome]] = {}
    for outcome in outcomes:
        by_item.setdefault(outcome.item, []).append(outcome)
    missing = unwritten(by_item, items)
    tests = {item.id: _Tests.of(by_item.get(item.id, []), missing) for item in items}
    statuses = {
        item.id: "passed"
        if item.id in editions
        else (_status(item, tests[item.id]) if item.id in by_item else "error")
        for item in items
    }
    results = []
    for item in items:
        if item.id in editions:
            results.append(not_in_edition(item, editions[item.id]))
            continue
        results.append(_result(item, by_item.get(item.id, []), tests[item.id], statuses, missing))
    return results


def _result(
    item: Item,
    mine: list[TestOutcome],
    tests: _Tests,
    statuses: Mapping[str, str],
    missing: set[str],
) -> ItemResult:
    """One item's result: its own tests' score, 0 while an item it depends on fails."""
    own = statuses[item.id]
    failed_deps = [d for d in item.depends_on if statuses.get(d, "passed") != "passed"]
    status = NOT_GRADABLE if failed_deps and own in ("passed", "partial") else own
    fraction = 0.0 if failed_deps else tests.fraction() if item.partial_credit else 1.0
    fraction *= own in ("passed", "partial")
    first = next((o for o in tests.graded if not o.passed), next(iter(tests.unwritten), None))
    if first is None and status != "passed":
        first = next(iter(tests.waiting), None)
    failures = _failures(mine)
    waiting = _not_gradable(mine, missing)
    hint = item.hint if failures or failed_deps else ""
    reason = first.reason if first else ""
    if failed_deps and not failures:
        reason = fix_first_line(failed_deps)
    return ItemResult(
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
                failed_deps, failures, hint, not_gradable_note(waiting, bool(tests.counted))
            )
            if mine
            else NEVER_RAN
        ),
        reason=reason if mine else NEVER_RAN,
        figure=first.figure if first else None,
        failures=failures,
        fix_first=failed_deps,
        hint=hint,
        not_gradable=waiting,
        credit=fraction,
    )
