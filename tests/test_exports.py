"""A class as LMSs deliver it (issue 50): files dragged into Gradescope without their folders,
Canvas's and Moodle's "download all submissions" exports named as they name them, and a zip
cut short in the upload, graded in one batch: one row per student, the id from the export, and
each with the status and the one cause that explains it."""

from __future__ import annotations

import csv
import zipfile
from pathlib import Path

import pytest
from rich.console import Console

from grader.batch import batch
from grader.batch.batch import BatchOptions
from grader.run.api import GradeOptions
from tests.grading import REFERENCE

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("exports")]

ONLY = ("micrograd.ops.tanh", "babygrad.ops.add")
SLOT = 260
ENGINE = (REFERENCE / "micrograd" / "engine.py").read_bytes()
TENSOR = (REFERENCE / "babygrad" / "tensor.py").read_bytes()
OPS = (REFERENCE / "babygrad" / "ops.py").read_bytes()
BROKEN_OPS = OPS.replace(b"class Add(Function):", b"class Add(Function)", 1)


def write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def build_class(root: Path) -> None:
    # Gradescope: three files dragged in, no folders
    for name, data in {"engine.py": ENGINE, "tensor.py": TENSOR, "ops.py": OPS}.items():
        write(root / "dana_flat" / name, data)
    # Canvas: one file per file handed in, named <name>_<user id>_<submission id>_<file>
    write(root / "bobjones_1002_556_engine.py", ENGINE)
    write(root / "bobjones_1002_557_tensor.py", TENSOR)
    write(root / "bobjones_1002_558_ops.py", OPS)
    write(root / "carolwu_LATE_1003_560_tensor.py", TENSOR)  # handed in again, late
    write(root / "carolwu_LATE_1003_561_ops-1.py", BROKEN_OPS)
    # Moodle: a folder per student and plugin
    moodle = root / "Alice Smith_1001_assignsubmission_file_"
    write(moodle / "hw2" / "micrograd" / "engine.py", ENGINE)
    write(root / "Alice Smith_1001_assignsubmission_onlinetext_" / "onlinetext.html", b"<p>hi</p>")
    # a zip cut short on its way up
    whole = root / "erin.zip"
    with zipfile.ZipFile(whole, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("micrograd/engine.py", ENGINE)
    whole.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])


def test_a_class_as_lms_exports_deliver_it(tmp_path):
    build_class(tmp_path / "uploads")
    grading = GradeOptions(Path(), seed=4242, only=ONLY, slot=SLOT)
    options = BatchOptions(tmp_path / "uploads", tmp_path / "out", grading, jobs=2)
    outcome = batch.run(options, Console(quiet=True))
    with (options.out / "grades.csv").open(newline="") as handle:
        table = {row["student"]: row for row in csv.DictReader(handle)}
    assert {s: (r["status"], r["total"]) for s, r in table.items()} == {
        "Alice Smith_1001": ("graded", "6"),
        "bobjones_1002": ("graded", "9"),
        "carolwu_1003": ("import failed", "0"),
        "dana_flat": ("graded", "9"),
        "erin": ("refused upload", "0"),
    }
    assert "babygrad: tensor.py, ops.py (loose files" in table["dana_flat"]["notes"]
    assert "micrograd: engine.py" in table["bobjones_1002"]["notes"]
    erin = (options.out / "feedback" / "erin.md").read_text()
    assert erin.count("could not be read: not a valid zip archive") == 1, erin
    assert "zip your files again" in erin and "not submitted" not in erin
    page = (options.out / "feedback" / "erin.html").read_text()
    assert page.count("could not be read: not a valid zip archive") == 1, page
    carol = (options.out / "feedback" / "carolwu_1003.md").read_text()
    assert "SyntaxError" in carol
    assert outcome.failed == 0
