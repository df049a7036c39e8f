"""What ``python -m grader grade`` prints and writes, as a student reads it: snippets as plain
code in the terminal (no Markdown fences; the Markdown and JSON reports keep theirs), no note
on an engine the grade ignores, a notebook upload's snippets runnable in the notebook (graded
alone or in a batch), and titles that name the oracles that checked."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from grader.batch import batch
from grader.batch.batch import BatchOptions
from grader.report.document import unfenced
from grader.run.api import GradeOptions, checked_title
from tests.grading import REFERENCE, graded_by_command, planted
from tests.shown_commands import notebook

TANH_BUG = {"micrograd/engine.py": [("1.0 - t * t", "1.0 - t")]}


def test_unfenced_drops_only_a_snippets_fence():
    text = "a: wrong\nSmallest example (runnable):\n```python\nx = 1\n```\n```\nstudent's ```"
    assert unfenced(text) == "a: wrong\nSmallest example (runnable):\nx = 1\n```\nstudent's ```"


def _grade(submission: Path, tmp_path: Path) -> tuple[str, dict]:
    stdout, document = graded_by_command(
        submission,
        tmp_path / "grade.json",
        "--assignment",
        "micrograd",
        "--only",
        "micrograd.ops.tanh",
    )
    return stdout, document["items"][0]


@pytest.mark.slow
def test_a_folders_report_shows_plain_snippets_and_only_what_is_graded(tmp_path):
    """The reference's folder holds babygrad/ too: a micrograd grade does not mention it."""
    stdout, item = _grade(planted(tmp_path / "bug", TANH_BUG), tmp_path)
    assert item["status"] == "failed" and "```python" in item["feedback"]  # JSON keeps its fence
    assert "```" not in stdout
    assert "Smallest example (runnable):\nfrom micrograd.engine import Value\n" in stdout
    assert "upload: micrograd: micrograd/engine.py" in stdout and "babygrad" not in stdout


@pytest.mark.slow
@pytest.mark.parametrize("within", ["", "hw2"])
def test_a_notebooks_snippets_run_in_the_notebook(tmp_path, within):
    """The notebook defines ``Value`` in a cell: its snippet imports nothing from a module the
    notebook does not have, and runs in the notebook's namespace as a cell after that one;
    uploaded alone or in a folder (as Gradescope and a batch receive it)."""
    engine = (planted(tmp_path / "bug", TANH_BUG) / "micrograd" / "engine.py").read_text()
    upload = tmp_path / "upload" / within / "my_engine.ipynb"
    upload.parent.mkdir(parents=True)
    upload.write_text(notebook(engine))
    stdout, item = _grade(upload.parent if within else upload, tmp_path)
    assert item["status"] == "failed"
    snippet = item["feedback"].split("```python\n")[1].split("\n```")[0]
    assert "import" not in snippet and snippet.startswith("# run in the notebook, after the")
    assert "from micrograd" not in stdout + item["feedback"]
    namespace: dict = {}
    exec(compile(engine, "cell 1", "exec"), namespace)  # the notebook's cell, then the snippet
    exec(compile(snippet, "cell 2", "exec"), namespace)


@pytest.mark.slow
def test_a_batchs_feedback_shows_a_notebooks_snippets_as_the_notebook_runs_them(tmp_path):
    """Batch grading writes each student's Markdown and HTML feedback: a notebook upload's
    snippet there, too, imports nothing from a module the notebook does not have."""
    engine = (planted(tmp_path / "bug", TANH_BUG) / "micrograd" / "engine.py").read_text()
    (tmp_path / "uploads").mkdir()
    (tmp_path / "uploads" / "alice.ipynb").write_text(notebook(engine))
    grading = GradeOptions(Path(), assignment="micrograd", only=("micrograd.ops.tanh",))
    options = BatchOptions(tmp_path / "uploads", tmp_path / "out", grading, jobs=1)
    assert batch.run(options, Console(quiet=True)).graded == 1
    for suffix in (".md", ".html"):
        feedback = (options.out / "feedback" / f"alice{suffix}").read_text()
        assert "# run in the notebook, after the cells that define Value" in feedback, suffix
        assert "from micrograd" not in feedback, suffix


def test_a_title_names_the_oracles_of_its_run():
    title = "random whole graphs of every op match the oracles"
    assert checked_title(title, ["finite differences"]) == (
        "random whole graphs of every op match finite differences"
    )
    assert checked_title(title, ["reference", "pytorch", "finite differences"]) == (
        "random whole graphs of every op match the reference, PyTorch and finite differences"
    )
    assert checked_title(title, []) == title  # nothing checked: nothing named
    assert checked_title("tanh, forward and backward", ["reference"]) == (
        "tanh, forward and backward"
    )


@pytest.mark.slow
def test_the_html_reports_graphs_title_says_what_checked_it(tmp_path):
    """Graded without PyTorch, the page's ``micrograd.graphs`` does not claim to match it."""
    page = tmp_path / "grade.html"
    _, document = graded_by_command(
        REFERENCE,
        tmp_path / "grade.json",
        "--assignment",
        "micrograd",
        "--only",
        "micrograd.graphs",
        "--no-torch",
        "--html",
        page,
    )
    (item,) = document["items"]
    assert document["oracles"] == ["reference", "finite differences"]
    assert item["title"].endswith("match the reference and finite differences")
    assert item["title"] in page.read_text() and "match PyTorch" not in page.read_text()
