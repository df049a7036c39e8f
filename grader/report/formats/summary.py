"""The class summary page: per-item mean and pass rate, the commonest named bugs, a histogram,
and on a rerun the grades that moved since the last run.

One self-contained HTML file (the histogram PNG is embedded), so it can be mailed or archived
as is. Every text a submission could influence is HTML-escaped.
"""

from __future__ import annotations

import base64
import statistics
from collections import Counter
from collections.abc import Sequence
from html import escape
from urllib.parse import quote

from grader.grading.rubric import Item
from grader.report.formats import Change, StudentResult
from grader.report.formats.histogram import histogram_png

TOP_BUGS = 10
STYLE = (
    "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:.2em .6em}td.n{text-align:right}"
)


def _percent(value: float) -> str:
    return f"{value:.0f}%"


def percentages(results: Sequence[StudentResult]) -> list[float]:
    """Each graded student's total as a percentage of the maximum."""
    return [
        100 * r.report.score / r.report.max_score
        for r in results
        if r.report is not None and r.report.max_score
    ]


def _item_rows(results: Sequence[StudentResult], items: Sequence[Item]) -> list[str]:
    everyone = [i for r in results if r.report for i in r.report.results]
    rows = []
    for item in items:
        graded = [i for i in everyone if i.id == item.id]
        if not graded:
            continue
        mean = statistics.fmean(i.score for i in graded)
        passed = sum(i.status == "passed" for i in graded) / len(graded)
        rows.append(
            f"<tr><td>{escape(item.id)}</td><td>{escape(item.title)}</td>"
            f"<td class=n>{item.points:g}</td><td class=n>{mean:.2f}</td>"
            f"<td class=n>{_percent(100 * passed)}</td></tr>"
        )
    return rows


def _student_rows(results: Sequence[StudentResult]) -> list[str]:
    """One row per graded student, linking to the pages batch grading writes beside this one."""
    rows = []
    for result in results:
        if result.report is None:
            continue
        page = quote(f"feedback/{result.student}")
        rows.append(
            f"<tr><td><a href='{page}.html'>{escape(result.student)}</a></td>"
            f"<td class=n>{result.report.score:g}/{result.report.max_score:g}</td>"
            f"<td><a href='{page}.md'>Markdown</a></td></tr>"
        )
    return rows


def _bug_rows(results: Sequence[StudentResult]) -> list[str]:
    seen: Counter[str] = Counter()
    where: dict[str, set[str]] = {}
    for result in results:
        for item in result.report.results if result.report else []:
            for bug in item.bugs:
                seen[bug] += 1
                where.setdefault(bug, set()).add(item.id)
    return [
        f"<tr><td>{escape(bug)}</td><td class=n>{count}</td>"
        f"<td>{escape(', '.join(sorted(where[bug])))}</td></tr>"
        for bug, count in seen.most_common(TOP_BUGS)
    ]


def _changes(changes: Sequence[Change] | None) -> list[str]:
    """The section "What changed since the last run" (none on a first run): after a fixed
    grader or reference, the students an instructor must tell."""
    if changes is None:
        return []
    parts = ["<h2>What changed since the last run</h2>"]
    if not changes:
        return [*parts, "<p>No grade changed since the last run.</p>"]
    return [
        *parts,
        f"<p>{len(changes)} grade(s) changed (also in <a href='changes.csv'>changes.csv</a>).</p>",
        "<table><tr><th>student</th><th>old total</th><th>new total</th>"
        "<th>items changed</th></tr>",
        *(
            f"<tr><td>{escape(c.student)}</td><td class=n>{escape(c.old_total)}</td>"
            f"<td class=n>{escape(c.new_total)}</td><td>{escape(c.flipped)}</td></tr>"
            for c in changes
        ),
        "</table>",
    ]


def summary_html(
    results: Sequence[StudentResult], items: Sequence[Item], changes: Sequence[Change] | None = None
) -> str:
    """The whole page for a batch; ``changes``: the grades that moved since the last run
    (None: the first run, nothing to compare)."""
    scores = percentages(results)
    failed = [r for r in results if r.report is None]
    picture = base64.b64encode(histogram_png(scores)).decode()
    parts = [
        f"<!doctype html><html><head><meta charset=utf-8><title>Class summary</title>"
        f"<style>{STYLE}</style></head><body><h1>Class summary</h1>",
        f"<p>{len(results)} submission(s), {len(scores)} graded, {len(failed)} not graded "
        "by a grader failure.",
    ]
    if scores:
        parts.append(
            f" Mean {_percent(statistics.fmean(scores))}, median "
            f"{_percent(statistics.median(scores))} of the maximum."
        )
    parts += [
        "</p>",
        *_changes(changes),
        "<h2>Scores</h2>",
        f"<img alt='histogram of scores as a percentage of the maximum' "
        f"src='data:image/png;base64,{picture}'>",
        "<h2>Items</h2><table><tr><th>item</th><th>title</th><th>points</th><th>mean</th>"
        "<th>passed</th></tr>",
        *_item_rows(results, items),
        "</table>",
        "<h2>Most common named bugs</h2><table><tr><th>bug</th><th>times</th><th>items</th></tr>",
        *_bug_rows(results),
        "</table>",
        "<h2>Students</h2><table><tr><th>student</th><th>score</th><th>feedback</th></tr>",
        *_student_rows(results),
        "</table>",
    ]
    if failed:
        parts += [
            "<h2>Not graded (grader failures)</h2><ul>",
            *(f"<li>{escape(r.student)}: {escape(r.error)}</li>" for r in failed),
            "</ul>",
        ]
    parts.append("</body></html>\n")
    return "\n".join(parts)
