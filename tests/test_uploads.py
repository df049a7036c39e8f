"""``grade`` takes any upload batch takes; an assignment not submitted is said once, and so is
an upload that could not be read (by ``grade`` and on Gradescope); an engine imports the modules
beside it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from rich.console import Console

from grader.grading.rubric import load
from grader.layout import DEFAULT_RUBRIC
from grader.report.document import render
from grader.report.formats import StudentResult
from grader.report.formats.gradebook import gradebook_csv
from grader.report.formats.gradescope import results
from grader.report.formats.junit import junit_xml
from grader.report.formats.markdown import feedback
from grader.report.html import render_html
from grader.run import api
from grader.run.api import GradeOptions, grade
from grader.run.submissions import NOT_READ
from tests.grading import REFERENCE, grade_command, grade_items, graded_by_command, planted

RUBRIC = load(DEFAULT_RUBRIC)
ENGINE = (REFERENCE / "micrograd" / "engine.py").read_text()
NO_BABYGRAD = "babygrad: not submitted (looked for a babygrad/ folder with tensor.py and ops.py)"


def notebook(*cells: str) -> str:
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "source": c,
                    "metadata": {},
                    "outputs": [],
                    "execution_count": None,
                }
                for c in cells
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def upload(tmp_path: Path, kind: str) -> Path:
    """The reference micrograd engine uploaded as a student would: one file, or a zip."""
    if kind == "ipynb":
        path = tmp_path / "my_engine.ipynb"
        path.write_text(
            notebook(
                "%matplotlib inline\nimport matplotlib.pyplot as plt",
                ENGINE,
                "a = Value(2.0)\nprint(a.tanh())",
            )
        )
    elif kind == "py":
        path = tmp_path / "my_engine.py"
        path.write_text(ENGINE)
    else:
        path = tmp_path / "hw.zip"
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("hw/micrograd/engine.py", ENGINE)
    return path


@pytest.mark.parametrize(
    "kind, found",
    [
        ("ipynb", "micrograd: definitions of the notebook my_engine.ipynb"),
        ("py", "micrograd: my_engine.py"),
        ("zip", "micrograd: hw/micrograd/engine.py"),
    ],
)
def test_grade_takes_a_notebook_a_file_or_a_zip(tmp_path, kind, found):
    stdout, document = graded_by_command(
        upload(tmp_path, kind),
        tmp_path / "grade.json",
        "--only",
        "micrograd.ops.tanh",
        "--only",
        "babygrad.ops.add",
    )
    assert f"upload: {found}" in stdout
    assert stdout.count(NO_BABYGRAD) == 1 and "babygrad.ops.add" not in stdout
    assert {i["id"]: (i["status"], i["score"]) for i in document["items"]} == {
        "micrograd.ops.tanh": ("passed", 6),
        "babygrad.ops.add": ("missing", 0),
    }
    assert document["not_submitted"] == {"babygrad": NO_BABYGRAD.split(": ", 1)[1]}


def test_not_a_submission_is_a_usage_error(tmp_path):
    (tmp_path / "engine.txt").write_text(ENGINE)
    run = grade_command("--submission", tmp_path / "engine.txt")
    assert run.returncode == 2 and "a folder, .py, .ipynb or .zip" in run.stdout


def cut_short(path: Path) -> Path:
    """A zip of the reference's micrograd cut to half its bytes, as an upload that broke off."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("hw/micrograd/engine.py", ENGINE)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    return path


UNREAD = "upload: could not be read: not a valid zip archive"
REMEDY = "zip your files again and upload the new zip, or upload the files themselves"


def said_once(text: str) -> None:
    """``text`` (a report) says the upload could not be read and what to do, once, and never
    that an assignment was not submitted."""
    words = " ".join(text.split())  # the terminal wraps long lines
    assert words.count(UNREAD) == 1 and words.count(REMEDY) == 1, text
    assert "not submitted" not in words, text


def test_a_zip_cut_short_is_said_once_with_what_to_do(tmp_path):
    """``grade`` in the terminal and each report it writes; the JSON names the cause of each
    assignment's zero."""
    page, markdown = tmp_path / "grade.html", tmp_path / "grade.md"
    stdout, document = graded_by_command(
        cut_short(tmp_path / "hw.zip"),
        tmp_path / "grade.json",
        "--markdown",
        markdown,
        "--html",
        page,
    )
    for text in (stdout, markdown.read_text(), page.read_text()):
        said_once(text)
    assert document["not_submitted"] == {"babygrad": NOT_READ, "micrograd": NOT_READ}
    assert {(i["status"], i["score"]) for i in document["items"]} == {("missing", 0)}


def test_gradescope_says_it_of_a_zip_left_unpacked(tmp_path):
    """A zip Gradescope did not unpack, alone in ``submission/``: the autograder's results say
    once that it could not be read, and no test that it was not submitted."""
    root = tmp_path / "autograder"
    cut_short(root / "submission" / "hw.zip")
    (root / "results").mkdir()
    run = subprocess.run(
        [sys.executable, "-I", "-m", "grader.release.autograder"],
        env={**os.environ, "AUTOGRADER_ROOT": str(root)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads((root / "results" / "results.json").read_text())
    said_once("\n".join([document["output"], *(t["output"] for t in document["tests"])]))
    outputs = {(t["score"], t["output"]) for t in document["tests"]}
    assert outputs == {(0, f"**missing**: {NOT_READ}")}


def test_an_absent_assignment_is_one_line_and_every_item_a_zero(tmp_path, monkeypatch):
    def no_worker(assignments, *args):
        raise AssertionError(f"a worker was started for {assignments}, which are not there")

    monkeypatch.setattr(api, "run_assignments", no_worker)
    report = grade(GradeOptions(submission=tmp_path))
    assert [i["id"] for i in report.items] == [i.id for i in RUBRIC.items]
    assert {(i["status"], i["score"]) for i in report.items} == {("missing", 0)}
    maximum = sum(i.points for i in RUBRIC.items if not i.extra_credit)
    assert report.score == 0 and report.max_score == maximum

    console = Console(record=True, width=200)
    render(report, RUBRIC.titles, console)
    terminal = console.export_text()
    markdown = feedback(report, RUBRIC.titles)
    page = render_html(report, RUBRIC.titles)
    for text in (terminal, markdown, page):
        assert text.count(NO_BABYGRAD) == 1 and text.count("micrograd: not submitted") == 1
        assert not any(i.id in text for i in RUBRIC.items), text

    suites = ET.fromstring(junit_xml(report).split("\n", 1)[1])
    cases = suites.findall("./testsuite/testcase")
    assert len(cases) == len(RUBRIC.items) and all(c.find("failure") is not None for c in cases)
    document = results(RUBRIC.items, report, 1.0)
    assert {(t["score"], t["status"]) for t in document["tests"]} == {(0, "failed")}
    assert all("not submitted" in t["output"] for t in document["tests"])
    (row,) = gradebook_csv([StudentResult("alice", report)], RUBRIC.items).splitlines()[1:]
    assert row.split(",")[1 : 3 + len(RUBRIC.items)] == ["0", f"{maximum:g}"] + ["0"] * len(
        RUBRIC.items
    )


def test_an_engine_imports_the_module_beside_it(tmp_path):
    submission = planted(
        tmp_path,
        {
            "micrograd/engine.py": [
                ("import math\n", "import math\n\nfrom utils import tanh\n"),
                ("t = math.tanh(self.data)", "t = tanh(self.data)"),
            ]
        },
    )
    (submission / "micrograd" / "utils.py").write_text("from math import tanh  # noqa\n")
    items = grade_items(submission, assignment="micrograd", only=["micrograd.ops.tanh"])
    assert items["micrograd.ops.tanh"]["status"] == "passed", items
