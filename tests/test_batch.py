"""Batch grading end to end: a class of 31 mixed uploads, the CSV checked cell by cell, the
same CSV graded on a saturated machine, a killed-and-resumed batch equal to an uninterrupted
one, and Dask equal to the local run."""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil
import signal
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from rich.console import Console

from grader.batch import batch
from grader.batch.batch import BatchOptions
from grader.batch.ledger import Key
from grader.grading.rubric import load
from grader.run.api import GradeOptions
from tests.grading import EXERCISES, REFERENCE
from tests.killed_batch import run_killed

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("batch")]  # one class, graded once

ONLY = (
    "micrograd.ops.add",
    "micrograd.ops.mul",
    "micrograd.ops.tanh",
    "micrograd.ops.exp",
    "micrograd.ops.relu",
)
POINTS = 6
SLOT = 40
SECRET_SEED = 918273645  # distinctive: a short seed would match any duration or count
GRADING = GradeOptions(Path(), seed=SECRET_SEED, only=ONLY, slot=SLOT)
ENGINE = (REFERENCE / "micrograd" / "engine.py").read_text()
ALL = frozenset(ONLY)


def engine(*pairs: tuple[str, str]) -> str:
    """The reference engine with each ``(old, new)`` replaced once (``old`` must occur)."""
    text = ENGINE
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


TANH = ("1.0 - t * t", "1.0 - t")
EXP = ("self.grad += out.data * out.grad", "self.grad += self.data * out.grad")
HANG = (
    "t = math.tanh(self.data)\n",
    "t = math.tanh(self.data)\n        while True:\n            pass\n",
)


def notebook(*cells: str) -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": "markdown", "source": ["# Homework"]},
                *({"cell_type": "code", "source": cell, "outputs": []} for cell in cells),
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def zipped(path: Path, members: dict[str, str]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in members.items():
            archive.writestr(name, text)


# student -> (items expected to score 0, a phrase the notes must contain)
EXPECTED: dict[str, tuple[frozenset[str], str]] = {}


def build_class(root: Path) -> None:
    """31 uploads: correct in every layout, buggy, broken and hostile."""

    def case(student: str, fails: frozenset[str] = frozenset(), note: str = "") -> str:
        EXPECTED[student] = (fails, note)
        return student

    shutil.copytree(
        REFERENCE,
        root / case("c01_folder", note="micrograd: micrograd/engine.py"),
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    write(
        root
        / case("c02_nested", note="hw1/src/code/micrograd/engine.py")
        / "hw1/src/code/micrograd/engine.py",
        ENGINE,
    )
    zipped(
        root / f"{case('c03_zip', note='project/micrograd/engine.py')}.zip",
        {"project/micrograd/engine.py": ENGINE, "project/README.md": "hi"},
    )
    write(root / f"{case('c04_py', note='c04_py.py')}.py", ENGINE)
    write(
        root / f"{case('c05_nb', note='notebook c05_nb.ipynb')}.ipynb",
        notebook(
            "%matplotlib inline\nimport matplotlib.pyplot as plt\nimport math",
            "class Value:\n    pass",
            ENGINE,
            "v = Value(2.0)\nprint(v)\nwhile True:\n    pass",
        ),
    )
    write(root / case("c06_topfile", note="micrograd: engine.py") / "engine.py", ENGINE)
    write(root / "c06_topfile" / "scratch" / "old.py", "class Value:\n    pass\n")
    write(root / case("=SUM(1+1)", note="micrograd: engine.py") / "engine.py", ENGINE)
    shutil.copytree(root / "c01_folder", root / case("c08_same_as_c01", note="micrograd/"))
    write(root / case("c09_precedence", note="micrograd/engine.py") / "micrograd/engine.py", ENGINE)
    write(root / "c09_precedence" / "engine.py", "def broken(:\n")
    zipped(
        root / f"{case('c10_zipped_nb', note='notebook nb/hw.ipynb')}.zip",
        {"nb/hw.ipynb": notebook(ENGINE)},
    )
    zipped(
        root / f"{case('c11_macosx', note='hw/micrograd/engine.py')}.zip",
        {"__MACOSX/hw/micrograd/engine.py": "garbage", "hw/micrograd/engine.py": ENGINE},
    )
    write(root / case("c12_value_file", note="code/autograd.py") / "code/autograd.py", ENGINE)
    write(root / "c12_value_file" / "code/notes.ipynb", notebook("class Value:\n    pass"))
    write(root / case("c13_babygrad_too", note="babygrad: src/babygrad/") / "src/engine.py", ENGINE)
    shutil.copytree(
        REFERENCE / "babygrad",
        root / "c13_babygrad_too" / "src" / "babygrad",
        ignore=shutil.ignore_patterns("__pycache__"),
    )

    tanh, exp = frozenset({"micrograd.ops.tanh"}), frozenset({"micrograd.ops.exp"})
    bugs = {
        "b01_tanh": ([TANH], tanh),
        "b02_exp": ([EXP], exp),
        "b04_mul": (
            [("self.grad += other.data * out.grad", "self.grad += self.data * out.grad")],
            frozenset({"micrograd.ops.mul"}),
        ),
        "b06_two": ([TANH, EXP], tanh | exp),
        "h01_hang": ([HANG], tanh),
        "h02_exit_in_exp": (
            [('out = Value(math.exp(self.data), (self,), "exp")', "import os; os._exit(0)")],
            exp,
        ),
        "h03_exit_on_import": ([("import math\n", "import math, os\nos._exit(3)\n")], ALL),
        "h07_print_flood": (
            [("import math\n", "import math\nprint('x' * 10_000_000)\n")],
            frozenset(),
        ),
        "x01_syntax": ([("def __add__(self, other):", "def __add__(self, other)")], ALL),
    }
    for student, (pairs, fails) in bugs.items():
        write(
            root / case(student, fails, "micrograd/engine.py") / "micrograd/engine.py",
            engine(*pairs),
        )
    write(root / f"{case('b08_nb_bug', tanh, 'notebook')}.ipynb", notebook(engine(TANH)))
    zipped(
        root / f"{case('b09_zip_bug', exp, 'sub/engine.py')}.zip", {"sub/engine.py": engine(EXP)}
    )

    nothing = "nothing gradable"
    (root / case("x03_empty", ALL, nothing)).mkdir()
    write(root / case("x04_readme", ALL, nothing) / "README.md", "I did not finish")
    shutil.copytree(
        EXERCISES,
        root / case("x05_stubs", ALL, "micrograd/engine.py"),
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    write(root / f"{case('x06_nb_no_value', ALL, 'notebook')}.ipynb", notebook("x = 1"))
    zipped(
        root / f"{case('h04_escape', ALL, 'escapes the folder')}.zip",
        {"../../evil.py": "print('pwned')", "micrograd/engine.py": ENGINE},
    )
    (root / case("h05_symlink", ALL, "not a regular file")).mkdir()
    (root / "h05_symlink" / "engine.py").symlink_to("/etc/passwd")
    zipped(
        root / f"{case('h06_bomb', ALL, 'more than the limit')}.zip",
        {"micrograd/engine.py": ENGINE + "#" + "0" * (40 << 20)},
    )
    write(root / "notes.txt", "not an upload")


@pytest.fixture(scope="session")  # once per run: see tests/conftest.py
def graded_class(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    uploads = root / "uploads"
    uploads.mkdir()
    build_class(uploads)
    options = BatchOptions(uploads, root / "out", GRADING, jobs=2)
    outcome = batch.run(options, Console(quiet=True))
    return options, outcome


def rows(out: Path) -> dict[str, dict[str, str]]:
    with (out / "grades.csv").open(newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def test_the_csv_cell_by_cell(graded_class):
    options, outcome = graded_class
    assert len(EXPECTED) == 31
    assert outcome.failed == 0 and outcome.graded == 30  # c08 is c01's content: graded once
    item_ids = [item.id for item in load(options.grading.rubric).items]
    with (options.out / "grades.csv").open(newline="") as handle:
        header = next(csv.reader(handle))
    assert header == ["student", "total", "max", *item_ids, "status", "notes"]
    table = rows(options.out)
    assert set(table) == {"'=SUM(1+1)", *(s for s in EXPECTED if s != "=SUM(1+1)")}
    for student, (fails, note) in EXPECTED.items():
        row = table["'" + student if student.startswith("=") else student]
        scores = {item: 0 if item in fails else POINTS for item in ONLY}
        assert row["total"] == str(sum(scores.values())), (student, row)
        assert row["max"] == str(POINTS * len(ONLY))
        for item in item_ids:
            assert row[item] == (str(scores[item]) if item in scores else ""), (student, item)
        assert note in row["notes"], (student, row["notes"])


@contextmanager
def saturated(burners: int = 2) -> Iterator[None]:
    """The machine's cores kept busy by CPU-burning processes of the test's own."""
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(burners):
            processes.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        yield
    finally:
        for process in processes:
            process.kill()
            process.wait()


def test_a_saturated_machine_gives_the_same_csv(graded_class, tmp_path):
    """Grades never depend on load (issue 37: under load, an upload once got a total of 0
    with no item results, counted as graded)."""
    options, _ = graded_class
    loaded = dataclasses.replace(options, out=tmp_path / "out")
    with saturated():
        outcome = batch.run(loaded, Console(quiet=True))
    assert (outcome.graded, outcome.failed) == (30, 0)
    assert (loaded.out / "grades.csv").read_text() == (options.out / "grades.csv").read_text()


def test_statuses_and_feedback_files(graded_class):
    options, _ = graded_class
    feedback = options.out / "feedback"
    assert len(list(feedback.glob("*.md"))) == 31
    assert len(list(feedback.glob("*.html"))) == 31
    assert "| micrograd.ops.tanh | 0/6 | timeout |" in (feedback / "h01_hang.md").read_text()
    assert "| micrograd.ops.exp | 0/6 | error |" in (feedback / "h02_exit_in_exp.md").read_text()
    assert "tanh-derivative" in (feedback / "b01_tanh.md").read_text()
    assert "pwned" not in (feedback / "h04_escape.md").read_text()
    summary = (options.out / "summary.html").read_text()
    assert "<svg" in summary and "tanh-derivative" in summary
    assert 'href="feedback/b01_tanh.html"' in summary
    ledger = "".join(p.read_text() for p in (options.out / "ledger").glob("*"))
    assert str(SECRET_SEED) not in ledger


def test_a_rerun_grades_only_what_changed(graded_class, tmp_path):
    options, _ = graded_class
    again = batch.run(options, Console(quiet=True))
    assert (again.graded, again.reused, again.failed) == (0, 31, 0)
    uploads, out = tmp_path / "uploads", tmp_path / "out"
    shutil.copytree(options.submissions / "b01_tanh", uploads / "b01_tanh")
    shutil.copytree(options.submissions / "c01_folder", uploads / "c01_folder")
    shutil.copytree(options.out / "ledger", out / "ledger")
    write(uploads / "b01_tanh" / "micrograd" / "engine.py", ENGINE)  # the student fixed it
    fixed = batch.run(
        dataclasses.replace(options, submissions=uploads, out=out), Console(quiet=True)
    )
    assert (fixed.graded, fixed.reused) == (1, 1)
    assert rows(out)["b01_tanh"]["total"] == "30"


def test_keys_change_with_everything_a_grade_depends_on(graded_class, tmp_path):
    options, _ = graded_class
    rubric = load(options.grading.rubric)
    upload = batch.discover(options.submissions)[0][0]

    def key(**changes) -> Key:
        grading = dataclasses.replace(options.grading, **changes)
        return batch.keys(dataclasses.replace(options, grading=grading), [upload], rubric)[
            upload.student
        ]

    changed_rubric = tmp_path / "rubric.yaml"
    changed_rubric.write_text(
        options.grading.rubric.read_text().replace("examples: 40", "examples: 41", 1)
    )
    digests = {
        key().digest,
        key(seed=99).digest,
        key(only=ONLY[:2]).digest,
        key(assignment="micrograd").digest,
        batch.keys(options, [upload], load(changed_rubric))[upload.student].digest,
    }
    assert len(digests) == 5


def test_a_killed_batch_resumes_to_the_same_result(graded_class, tmp_path):
    options, _ = graded_class
    uploads = tmp_path / "uploads"
    subset = [
        "c02_nested",
        "b02_exp",
        "c04_py.py",
        "x03_empty",
        "h03_exit_on_import",
        "c06_topfile",
    ]
    for name in subset:
        source = options.submissions / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, uploads / name)
    out = tmp_path / "out"
    arguments = [str(uploads), "--out", str(out), "-j", "1", "--seed", str(SECRET_SEED)]
    arguments += ["--slot", str(SLOT), *(f"--only={i}" for i in ONLY)]
    assert run_killed(2, arguments) == -signal.SIGKILL
    done = len(list((out / "ledger").glob("*.json")))
    assert done == 2 and not (out / "grades.csv").exists()
    resumed = batch.run(BatchOptions(uploads, out, GRADING, jobs=2), Console(quiet=True))
    assert (resumed.graded, resumed.reused) == (len(subset) - done, done)
    full = rows(options.out)
    students = [Path(name).stem for name in subset]
    assert rows(out) == {s: full[s] for s in students}
    for student in students:
        assert (out / "feedback" / f"{student}.md").read_text() == (
            options.out / "feedback" / f"{student}.md"
        ).read_text()


def test_dask_gives_the_local_result(graded_class, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    options, _ = graded_class
    uploads = tmp_path / "uploads"
    subset = ["c01_folder", "b01_tanh", "x03_empty", "h04_escape.zip", "c05_nb.ipynb"]
    for name in subset:
        source = options.submissions / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, uploads / name)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        outcome = batch.run(
            BatchOptions(uploads, tmp_path / "out", GRADING, scheduler=cluster.scheduler_address),
            Console(quiet=True),
        )
    assert (outcome.graded, outcome.failed) == (len(subset), 0)
    full = rows(options.out)
    students = [Path(name).stem for name in subset]
    assert rows(tmp_path / "out") == {s: full[s] for s in students}
    for student in students:
        assert (tmp_path / "out" / "feedback" / f"{student}.md").read_text() == (
            options.out / "feedback" / f"{student}.md"
        ).read_text()
