"""The HTML report: self-contained, complete, and really rendered by a browser.

The browser test opens the page in headless Chromium and reads the screenshot's pixels: the
status badges and the wrong node's fill have colours used nowhere else, so finding them drawn,
in the right number and order, proves the table and the graph were laid out and painted, not
only written into the source. ``GRADER_SCREENSHOT=docs/report.png`` keeps the screenshot (the
README's picture: ``tests.programs.screenshot``).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from grader.grading import rubric
from grader.layout import DEFAULT_RUBRIC
from grader.report import drawing as pictures
from grader.report.document import GradeReport
from grader.report.html import STATUS_COLOUR, render_html, write_html_report
from grader.run.api import GradeOptions, grade
from tests.grading import REPO, grade_command, planted
from tests.programs import needs_chromium, needs_dot, painted, screenshot

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("html_report")]  # graded once

WINDOW = (1200, 1600)


@pytest.fixture(scope="session")  # once per run: see tests/conftest.py
def graded(tmp_path_factory) -> tuple[GradeReport, dict[str, str]]:
    """micrograd with two classic bugs: ``1 - t`` for tanh's derivative, and ``=`` for ``+=``
    in ``__add__`` (so ``a + a`` loses a contribution). Three failures, ten passes."""
    submission = planted(
        tmp_path_factory.mktemp("bugs"),
        {
            "micrograd/engine.py": [
                ("1.0 - t * t", "1.0 - t"),
                ("self.grad += out.grad\n", "self.grad = out.grad\n"),
                ("other.grad += out.grad", "other.grad = out.grad"),
            ]
        },
    )
    report = grade(GradeOptions(submission=submission, assignment="micrograd"))
    return report, rubric.load(DEFAULT_RUBRIC).titles


def _article(page: str, item_id: str) -> str:
    start = page.index(f'<article class="failure" id="item-{item_id.replace(".", "-")}"')
    return page[start : page.index("</article>", start)]


def test_the_page_is_self_contained(graded):
    page = render_html(*graded)
    for outside in ("<script", "<link", "<img", "<iframe", "src=", "@import", "url("):
        assert outside not in page
    addresses = set(re.findall(r"https?://[^\"'\s<>]*", page))
    assert addresses <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}


def test_the_table_lists_every_item_with_points_and_status(graded):
    report, titles = graded
    page = render_html(report, titles)
    assert titles["micrograd"] in page
    for item in report.items:
        row = page[
            page.index(f"<td>{item['id']}")
            if item["status"] == "passed"
            else page.index(f">{item['id']}</a></td>") :
        ]
        row = row[: row.index("</tr>")]
        assert f"{item['score']:g}/{item['max_score']:g}" in row
        assert f'class="status {item["status"]}"' in row


def test_each_failure_has_its_snippet_expected_got_bug_and_hint(graded):
    page = render_html(*graded)
    tanh = _article(page, "micrograd.ops.tanh")
    assert "<pre><code>from micrograd.engine import Value\na = Value(1.0)\nout = a.tanh()" in tanh
    assert "expected 0.419974, got 0.238406" in tanh
    assert '<p class="bug">Recognised bug: tanh-derivative' in tanh
    assert '<p class="hint">Hint: t = tanh(x)' in tanh
    graphs = _article(page, "micrograd.graphs")
    assert '<p class="depends">Fix micrograd.accumulate, micrograd.ops.tanh first' in graphs
    assert 'href="#item-micrograd-ops-tanh"' in page
    assert "b = a + a" in _article(page, "micrograd.accumulate")


SCRIPT = "<script>alert(1)</script>"


def test_what_a_submission_controls_shows_as_text():
    """A function's name, an exception's message, a printed value and an uploaded file's name
    are the student's to choose: each shows as text, none becomes markup of the page."""
    failure = {
        "test": f"test_{SCRIPT}",
        "reason": f"{SCRIPT} raised",
        "details": [f"expected 1.0, got {SCRIPT}"],
        "snippet": f"a.{SCRIPT}()",
        "bugs": [SCRIPT],
    }
    item = {
        "id": "micrograd.ops.tanh",
        "assignment": "micrograd",
        "title": "tanh",
        "score": 0,
        "max_score": 6,
        "extra_credit": False,
        "visibility": "visible",
        "status": "failed",
        "bugs": [SCRIPT],
        "feedback": SCRIPT,
        "reason": SCRIPT,
        "failures": [failure],
        "hint": "",
    }
    absent = {**item, "id": "babygrad.ops.add", "assignment": "babygrad"}
    report = GradeReport(
        "all",
        1,
        [item, absent],
        ["reference"],
        [],
        1.0,
        notices=[SCRIPT],
        not_importable={"babygrad": SCRIPT},
    )
    page = render_html(report, {"micrograd": SCRIPT}, [f"micrograd: {SCRIPT}.py"])
    assert "<script" not in page
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    tanh = _article(page, "micrograd.ops.tanh")
    for shown in (
        f"test_{escaped}: {escaped} raised",
        f"expected 1.0, got {escaped}",
        f"<pre><code>a.{escaped}()</code></pre>",
        f"Recognised bug: {escaped}",
    ):
        assert shown in tanh, shown
    for shown in (
        f"upload: micrograd: {escaped}.py",
        f'<p class="notice">{escaped}</p>',
        f"babygrad: {escaped}</h2>",
        f"<h2>{escaped} ",
        f"<td>{escaped}</td>",
    ):
        assert shown in page, shown


@needs_dot
def test_with_graphviz_each_failure_has_its_picture_before_the_snippet(graded):
    page = render_html(*graded)
    tanh = _article(page, "micrograd.ops.tanh")
    assert tanh.count("<svg") == 1 and pictures.WRONG_FILL in tanh
    assert tanh.index("<svg") < tanh.index("<pre><code>")
    accumulate = _article(page, "micrograd.accumulate")
    assert accumulate.count("<title>a&#45;&gt;b</title>") == 2  # a + a: two edges into b


def test_without_graphviz_the_page_shows_the_text_drawing(graded, monkeypatch):
    monkeypatch.setattr(pictures, "dot_program", lambda: None)
    page = render_html(*graded)
    tanh = _article(page, "micrograd.ops.tanh")
    assert "<svg" not in page
    assert '<span class="wrong">✗ a  leaf   ✗ WRONG</span>' in tanh
    assert tanh.index('<pre class="drawing">') < tanh.index("<pre><code>")  # before the snippet
    assert "b = add(a, a)" in _article(page, "micrograd.accumulate")  # a + a: one node, twice


def _bands(mask: np.ndarray) -> list[tuple[int, int]]:
    """Runs of consecutive screenshot rows holding at least one pixel of the mask."""
    rows = np.flatnonzero(mask.any(axis=1))
    if rows.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(rows) > 1)
    starts = np.concatenate([[rows[0]], rows[breaks + 1]])
    ends = np.concatenate([rows[breaks], [rows[-1]]])
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


@needs_chromium
def test_a_browser_renders_the_table_and_the_graph(graded, tmp_path):
    report, titles = graded
    page = tmp_path / "report.html"
    write_html_report(report, titles, page)
    image = screenshot(page, WINDOW)
    passed = sum(i["status"] == "passed" for i in report.items)
    badges = _bands(painted(image, STATUS_COLOUR["passed"]))
    assert len(badges) == passed, badges  # one painted badge per passing row
    graph = painted(image, pictures.WRONG_FILL)
    assert graph.sum() > 2000, "no wrong node was painted"
    (first_graph, _), *_ = _bands(graph)
    assert first_graph > badges[-1][1], "the graph should come after the table"
    ys, xs = np.nonzero(graph[first_graph : first_graph + 200])
    box = image[first_graph + ys.min() : first_graph + ys.max(), xs.min() : xs.max()]
    assert (box != 255).any(axis=2).mean() > 0.9, "the wrong node is a filled box"


def test_grade_with_only_and_html_writes_a_page_of_just_those_items(tmp_path):
    submission = planted(tmp_path, {"micrograd/engine.py": [("1.0 - t * t", "1.0 - t")]})
    page = tmp_path / "out" / "report.html"
    done = grade_command(
        "--submission",
        submission,
        "--only",
        "micrograd.ops",
        "--only",
        "micrograd.topo",
        "--html",
        page,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = re.findall(r'<tr><td>(?:<a href="[^"]*">)?([\w.]+)', page.read_text())
    ops = ["add", "mul", "pow", "tanh", "exp", "relu"]
    assert sorted(rows) == sorted(["micrograd.topo", *(f"micrograd.ops.{op}" for op in ops)])
    assert page.read_text().count('<article class="failure"') == 1
