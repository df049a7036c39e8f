"""The grade report as one self-contained HTML page a student can open anywhere.

Everything is inline (CSS, the Graphviz SVG pictures) and nothing is fetched when the page is
viewed, so it works from an e-mail attachment or a course platform's file view. Batch grading
writes the same page per student with ``write_html_report``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape
from pathlib import Path

from grader.atomic import write_atomically
from grader.grading.scoring import ItemResult, fix_first_line, graded_any, not_gradable_note
from grader.report.document import GradeReport
from grader.report.drawing import WRONG_FILL, WRONG_LINE, Picture, draw
from grader.report.view import AssignmentView, item_points, points

STATUS_COLOUR = {
    "passed": "#2e7d32",
    "partial": "#b26a00",
    "failed": "#c62828",
    "error": "#c62828",
    "timeout": "#8e24aa",
    "missing": "#757575",
    "not_gradable": "#757575",
    "not_in_edition": "#757575",
}
"""Badge colours; the test finds the rendered table by the ``passed`` one."""

STYLE = f"""
body {{ font: 15px/1.45 "DejaVu Sans", Helvetica, Arial, sans-serif; color: #1d2530;
       margin: 24px auto; max-width: 1100px; padding: 0 20px; background: #ffffff; }}
h1 {{ margin: 0 0 4px; font-size: 26px; }}
h2 {{ margin: 28px 0 8px; font-size: 20px; border-bottom: 2px solid #d8dee6; }}
h3 {{ margin: 0 0 6px; font-size: 17px; }}
.meta, .title {{ color: #5a6b7d; font-size: 13px; }}
.notice {{ background: #fff4d6; padding: 6px 10px; border-left: 4px solid #b26a00; }}
table {{ border-collapse: collapse; width: 100%; }}
th, td {{ text-align: left; padding: 4px 10px; border-bottom: 1px solid #e3e8ee;
          vertical-align: top; }}
th {{ background: #eef2f6; font-size: 13px; }}
td.points {{ text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }}
.status {{ display: inline-block; min-width: 64px; text-align: center; color: #ffffff;
           border-radius: 4px; padding: 1px 6px; font-size: 13px; font-weight: bold; }}
{"".join(f".status.{name} {{ background: {colour}; }}" for name, colour in STATUS_COLOUR.items())}
.score {{ font-weight: bold; }}
.failure {{ border: 1px solid #d8dee6; border-radius: 6px; padding: 14px 18px;
            margin: 16px 0; }}
.failure figure {{ margin: 10px 0; overflow-x: auto; }}
.failure figcaption {{ color: #5a6b7d; font-size: 13px; }}
pre {{ background: #f4f6f8; padding: 8px 12px; border-radius: 4px; overflow-x: auto;
       font: 13px/1.4 "DejaVu Sans Mono", monospace; }}
pre.drawing span.wrong {{ background: {WRONG_FILL}; color: {WRONG_LINE}; font-weight: bold; }}
p {{ margin: 4px 0; }}
p.detail {{ font-family: "DejaVu Sans Mono", monospace; font-size: 13px;
            white-space: pre-wrap; }}
h2.absent {{ color: #757575; }}
p.bug {{ background: #fdecea; border-left: 4px solid {WRONG_LINE}; padding: 6px 10px; }}
p.hint {{ background: #e8f1fb; border-left: 4px solid #1565c0; padding: 6px 10px; }}
p.depends {{ font-weight: bold; }}
"""


def anchor(item_id: str) -> str:
    """An HTML id (and SVG id prefix) for an item: ids are dotted, SVG ids must be names."""
    return "item-" + re.sub(r"[^A-Za-z0-9_-]", "-", item_id)


def _badge(status: str) -> str:
    return f'<span class="status {escape(status)}">{escape(status)}</span>'


def _table(view: AssignmentView, title: str) -> str:
    rows = []
    for item in view.items:
        name = escape(item.id)
        if item.status != "passed" and item.feedback:
            name = f'<a href="#{anchor(item.id)}">{name}</a>'
        rows.append(
            f'<tr><td>{name}</td><td class="title">{escape(item.title)}</td>'
            f'<td class="points">{item_points(item)}</td><td>{_badge(item.status)}</td>'
            f"<td>{escape(item.reason)}</td></tr>"
        )
    return (
        f'<h2>{escape(title)} <span class="score">{points(view.score)}/'
        f'{points(view.maximum)}</span></h2><table class="scores"><thead><tr><th>item</th>'
        "<th>what</th><th>points</th><th>status</th><th>reason</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _feedback(item: ItemResult, picture: str) -> str:
    """The item's verdicts as HTML, from their fields: the picture goes after the first
    expected vs. got, before its snippet."""
    parts = (
        [f'<p class="depends">{escape(fix_first_line(item.fix_first))}</p>']
        if item.fix_first
        else []
    )
    for failure in item.failures:
        parts.append(
            f'<p class="detail">{escape(failure["test"])}: {escape(failure["reason"])}</p>'
        )
        parts += [f'<p class="detail">{escape(line)}</p>' for line in failure["details"]]
        parts.append(picture)
        picture = ""
        if failure["snippet"]:
            parts.append(
                '<p class="caption">Smallest example (runnable):</p>'
                f"<pre><code>{escape(failure['snippet'])}</code></pre>"
            )
        parts += [f'<p class="bug">Recognised bug: {escape(bug)}</p>' for bug in failure["bugs"]]
    if item.hint:
        parts.append(f'<p class="hint">Hint: {escape(item.hint)}</p>')
    parts += [
        f'<p class="detail">{escape(line)}</p>'
        for line in not_gradable_note(item.not_gradable, graded_any(item))
    ]
    return "".join(parts) + picture


def _picture(picture: Picture) -> str:
    caption = (
        "The smallest graph where your engine goes wrong: each box is a node with its "
        "value, the expected gradient and yours."
    )
    if picture.svg is not None:
        body = picture.svg
    else:
        body = (
            '<pre class="drawing">'
            + "\n".join(
                f'<span class="wrong">{escape(line)}</span>' if wrong else escape(line)
                for line, wrong in picture.lines
            )
            + "</pre>"
        )
    return f"<figure>{body}<figcaption>{caption}</figcaption></figure>"


def _failure(item: ItemResult) -> str:
    picture = _picture(draw(item.figure, anchor(item.id))) if item.figure else ""
    return (
        f'<article class="failure" id="{anchor(item.id)}"><h3>{escape(item.id)} '
        f'{_badge(item.status)}</h3><p class="title">{escape(item.title)}</p>'
        f"{_feedback(item, picture)}</article>"
    )


def render_html(report: GradeReport, titles: dict[str, str], notes: Sequence[str] = ()) -> str:
    """The whole page: totals, one score table per assignment (one line for an assignment not
    submitted), then every failure. ``notes``: where the engines were found in the upload."""
    tables = "".join(
        f'<h2 class="absent">{escape(absent)}</h2>'
        if (absent := report.absent(view.assignment))
        else _table(view, titles.get(view.assignment, view.assignment))
        for view in report.views
    )
    failures = report.failures
    details = (
        "<h2>What went wrong</h2>" + "".join(_failure(i) for i in failures) if failures else ""
    )
    notices = "".join(f'<p class="meta">upload: {escape(n)}</p>' for n in notes) + "".join(
        f'<p class="notice">{escape(n)}</p>' for n in report.notices
    )
    checked = (
        f"Checked against: {escape(', '.join(report.oracles))} · " if report.oracles else ""
    )  # nothing was checked when nothing was submitted
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Grade report: {points(report.score)}/{points(report.max_score)}</title>"
        f"<style>{STYLE}</style></head><body>"
        f'<h1>Grade report <span class="score">{points(report.score)}/'
        f"{points(report.max_score)}</span></h1>"
        f'<p class="meta">{checked}graded in {report.duration_s:.1f} s</p>'
        f"{notices}{tables}{details}</body></html>\n"
    )


def write_html_report(
    report: GradeReport, titles: dict[str, str], path: Path, notes: Sequence[str] = ()
) -> None:
    """Write the page in one step (readers never see half a file)."""
    write_atomically(path, render_html(report, titles, notes))
