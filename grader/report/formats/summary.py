"""The class summary page an instructor reads in a minute: how many uploads ended in each
status, the scores and the points lost per item as charts, pass rates over the students who
submitted each assignment, the lowest scores, the most common named bugs, every student with
a status, and on a rerun what changed since the last run.

One self-contained HTML file (its charts are inline SVG), so it can be mailed or archived as
is. It is rendered from ``grader/report/templates/summary.html.j2`` by Jinja2 with every value
escaped (``grader.report.pages``): a student id or a bug's name cannot restyle the page.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from grader.grading.rubric import Item
from grader.report.formats import Change, StudentResult
from grader.report.pages import ENVIRONMENT

TOP_BUGS = 10
LOWEST = 10
BINS = 10
HEIGHT, WIDTH = 200, 360
"""The histogram's plot height and the points-lost chart's bar length, in pixels."""


def rounded(value: float) -> str:
    """A score as a person reads it: one decimal at most (``85.6``, ``6``)."""
    return f"{round(value, 1):g}"


def percentages(results: Sequence[StudentResult]) -> list[float]:
    """Each graded student's total as a percentage of the maximum."""
    return [
        100 * r.report.score / r.report.max_score
        for r in results
        if r.report is not None and r.report.max_score
    ]


def counts(values: Sequence[float]) -> list[int]:
    """How many scores fall in each tenth of the maximum (the last bin includes 100% and
    extra credit above it)."""
    bins = [0] * BINS
    for value in values:
        bins[min(max(int(value // (100 / BINS)), 0), BINS - 1)] += 1
    return bins


def submitted(result: StudentResult, assignment: str) -> bool:
    """Whether the student handed ``assignment`` in (an import that failed counts: it was
    handed in; a refused upload does not)."""
    report = result.report
    return report is not None and assignment not in report.not_submitted and not result.refused


@dataclass(frozen=True)
class ItemRow:
    """One rubric item over the students who submitted its assignment."""

    id: str
    title: str
    points: str
    students: int
    mean: str
    passed: str
    lost: float
    """Points lost per student who submitted, on average."""


def item_rows(results: Sequence[StudentResult], items: Sequence[Item]) -> list[ItemRow]:
    rows = []
    for item in items:
        graded = [
            i
            for r in results
            if r.report is not None and submitted(r, item.assignment)
            for i in r.report.results
            if i.id == item.id
        ]
        if not graded:
            continue
        mean = statistics.fmean(i.score for i in graded)
        passed = sum(i.status == "passed" for i in graded) / len(graded)
        rows.append(
            ItemRow(
                item.id,
                item.title,
                rounded(item.points),
                len(graded),
                rounded(mean),
                f"{100 * passed:.0f}%",
                max(statistics.fmean(i.max_score - i.score for i in graded), 0.0),
            )
        )
    return rows


@dataclass(frozen=True)
class StudentRow:
    student: str
    page: str
    """The feedback pages' path without the suffix, as a link."""
    score: str
    percent: float | None
    status: str
    error: str


def student_rows(results: Sequence[StudentResult]) -> list[StudentRow]:
    return [
        StudentRow(
            r.student,
            quote(f"feedback/{r.student}"),
            f"{rounded(r.report.score)}/{rounded(r.report.max_score)}" if r.report else "",
            100 * r.report.score / r.report.max_score if r.report and r.report.max_score else None,
            r.status,
            r.error,
        )
        for r in results
    ]


def bug_rows(results: Sequence[StudentResult]) -> list[tuple[str, int, str]]:
    """The named bugs most students have: the bug, how many students, in which items."""
    students: Counter[str] = Counter()
    where: dict[str, set[str]] = {}
    for result in results:
        found: set[str] = set()
        for item in result.report.results if result.report else []:
            for bug in item.bugs:
                found.add(bug)
                where.setdefault(bug, set()).add(item.id)
        students.update(found)
    return [
        (bug, count, ", ".join(sorted(where[bug]))) for bug, count in students.most_common(TOP_BUGS)
    ]


@dataclass(frozen=True)
class Tick:
    value: str
    at: float


def ticks(top: float, length: float, count: int = 5, whole: bool = False) -> list[Tick]:
    """Axis ticks from 0 to at least ``top`` on a nice step (1, 2 or 5 times a power of
    ten; whole numbers where ``whole``), placed along ``length`` pixels."""
    raw = max(top, 1e-9) / count
    step = min(
        m * 10 ** math.floor(math.log10(raw))
        for m in (1, 2, 5, 10)
        if m * 10 ** math.floor(math.log10(raw)) >= raw
    )
    step = max(step, 1) if whole else step
    last = step * math.ceil(max(top, step) / step)
    return [
        Tick(f"{round(k * step, 6):g}", length * k * step / last)
        for k in range(int(round(last / step)) + 1)
    ]


def summary_html(
    results: Sequence[StudentResult],
    items: Sequence[Item],
    changes: Sequence[Change] | None = None,
    rubric_changed: str = "",
) -> str:
    """The whole page for a batch; ``changes``: the grades that moved since the last run
    (None: the first run, nothing to compare); ``rubric_changed``: what moved in the
    rubric's points (``batch.rubric_changes``)."""
    scores = percentages(results)
    bins = counts(scores)
    rows = item_rows(results, items)
    lost = sorted((r for r in rows if r.lost > 0), key=lambda r: -r.lost)
    students = student_rows(results)
    statuses = Counter(r.status for r in results)
    count_ticks = ticks(max(bins, default=0), HEIGHT, whole=True)
    lost_ticks = ticks(max((r.lost for r in lost), default=0), WIDTH)
    return ENVIRONMENT.get_template("summary.html.j2").render(
        results=results,
        graded=len(scores),
        statuses=sorted(statuses.items(), key=lambda pair: (pair[0] != "graded", -pair[1])),
        mean=f"{statistics.fmean(scores):.0f}%" if scores else "",
        median=f"{statistics.median(scores):.0f}%" if scores else "",
        bins=[(n, HEIGHT * n / float(count_ticks[-1].value)) for n in bins],
        count_ticks=count_ticks,
        lost=[(r, WIDTH * r.lost / float(lost_ticks[-1].value)) for r in lost],
        lost_ticks=lost_ticks,
        height=HEIGHT,
        width=WIDTH,
        items=rows,
        lowest=sorted(
            (s for s in students if s.percent is not None), key=lambda s: (s.percent, s.student)
        )[:LOWEST],
        bugs=bug_rows(results),
        students=students,
        changes=changes,
        rubric_changed=rubric_changed,
        rounded=rounded,
    )
