"""An instructor's install: the wheel, built with a standard front end (``python -m build``),
installed into a fresh venv outside the checkout, grades every shipped course from an empty
folder through its console script, and a course folder of one's own by path."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.layout import REPO, shipped_courses
from tests.planted import one_bug_of, plant

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("install")]  # one wheel, one venv


@pytest.fixture(scope="session")
def script(tmp_path_factory) -> Path:
    """``autograd-grader`` in a fresh venv that holds the built wheel and nothing of REPO."""
    tmp = tmp_path_factory.mktemp("install")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(tmp / "dist"), str(REPO)],
        check=True,
        capture_output=True,
    )
    subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], check=True)
    (wheel,) = (tmp / "dist").glob("*.whl")
    subprocess.run(
        [str(tmp / "venv" / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
        check=True,
        capture_output=True,
    )
    return tmp / "venv" / "bin" / "autograd-grader"


def run(script: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(script), *args], cwd=cwd, capture_output=True, text=True)


def grade(script: Path, cwd: Path, course: str, submission: Path) -> dict[str, float]:
    """The items' scores of one grade, as ``--json`` writes them; lost points by item."""
    done = run(script, cwd, "grade", "--course", course, "--submission", str(submission),
               "--json", "grade.json")  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads((cwd / "grade.json").read_text())
    return {i["id"]: i["max_score"] - i["score"] for i in report["items"]}


def installed_reference(script: Path, course: str) -> Path:
    code = f"from grader.layout import course_root; print(course_root({course!r}))"
    python = script.parent / "python"
    return Path(subprocess.check_output([str(python), "-I", "-c", code], text=True).strip())


@pytest.mark.parametrize("course", shipped_courses())
def test_the_installed_package_grades_every_shipped_course(script, tmp_path, course):
    empty = tmp_path / "empty"
    empty.mkdir()
    folder = installed_reference(script, course)
    assert not folder.is_relative_to(REPO) and (folder / "reference").is_dir()
    lost = grade(script, empty, course, folder / "reference")
    assert {item: points for item, points in lost.items() if points} == {}
    bug = one_bug_of(course)
    lost = grade(script, empty, course, plant(tmp_path, bug, reference=folder / "reference"))
    losing = {item for item, points in lost.items() if points}
    assert bug.item in losing and losing <= {bug.item, f"{bug.item.split('.')[0]}.graphs"}


def test_a_course_folder_of_ones_own_grades_by_path(script, tmp_path):
    mine = tmp_path / "my-course"
    shutil.copytree(REPO / "courses" / "karpathy-micrograd", mine)
    for name in ("profile.yaml", "rubric.yaml"):
        text = (mine / name).read_text()
        (mine / name).write_text(text.replace("karpathy-micrograd", "my-course"))
    lost = grade(script, tmp_path, "./my-course", mine / "reference")
    assert lost and not any(lost.values())
    misspelled = run(script, tmp_path, "grade", "--course", "my-cours", "--submission", ".")
    assert misspelled.returncode == 2 and "no course 'my-cours'" in misspelled.stderr


def test_the_commands_name_themselves_as_called(script, tmp_path):
    assert run(script, tmp_path, "--help").stdout.startswith("usage: autograd-grader")
    python = str(script.parent / "python")
    module = subprocess.run([python, "-m", "grader", "--help"], capture_output=True, text=True)
    assert module.stdout.startswith("usage: python -m grader")


@pytest.mark.parametrize(
    ("module", "what"),
    [("grader.release.stubs", "make stubs"), ("grader.release.release", "make release")],
)
def test_what_needs_the_checkout_says_so_in_one_line(script, tmp_path, module, what):
    python = str(script.parent / "python")
    args = ["student"] if module.endswith("release") else []
    done = subprocess.run(
        [python, "-m", module, *args], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"{what} needs a checkout of the autograd-grader repository; the installed package "
        "grades and audits courses, nothing more"
    )
