"""The student release works on its own and leaks nothing: no reference, no solution code, no
hidden item or its grading test."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from grader.release import build_student
from grader.rubric import load
from tests.grading import REFERENCE, REPO
from tests.venvs import overlay_venv

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("release")
    student = build_student(tmp / "student")
    return student, overlay_venv(tmp / "venv", student)


def solution_blocks() -> list[str]:
    """Every fenced solution block of the reference, and each of its longer lines."""
    found = []
    for path in REFERENCE.rglob("*.py"):
        block: list[str] | None = None
        for line in path.read_text().splitlines():
            if "# BEGIN SOLUTION" in line:
                block = []
            elif "# END SOLUTION" in line and block is not None:
                found.append("\n".join(block))
                found += [text.strip() for text in block if len(text.strip()) >= 40]
                block = None
            elif block is not None:
                block.append(line)
    return found


def make_grade(student: Path, python: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-s", "grade", f"VENV={python.parent.parent}", *args],
                          cwd=student, capture_output=True, text=True, timeout=300)


def test_contents_and_no_leaks(release):
    student, _ = release
    names = {p.relative_to(student).as_posix() for p in student.rglob("*") if p.is_file()}
    assert {"Makefile", "README.md", "rubric.yaml", "pyproject.toml",
            ".github/workflows/classroom.yml", "exercises/micrograd/engine.py",
            "grader/suites/test_babygrad.py"} <= names
    assert not any(n.startswith(("reference/", "tests/")) or "__pycache__" in n for n in names)
    texts = [p.read_text() for p in student.rglob("*") if p.is_file()]
    blocks = solution_blocks()
    assert len(blocks) > 40
    leaked = [b for b in blocks if any(b in text for text in texts)]
    assert not leaked, leaked[:3]
    workflow = yaml.safe_load((student / ".github/workflows/classroom.yml").read_text())
    assert workflow["permissions"]["checks"] == "write"
    steps = " ".join(str(s.get("run", "")) for s in workflow["jobs"]["grade"]["steps"])
    assert "grader.formats.classroom" in steps and "GITHUB_STEP_SUMMARY" in steps
    assert "apparmor_restrict_unprivileged_userns=0" in steps and "torch" not in steps
    assert "advisory" in (student / "README.md").read_text()


def test_make_grade_gives_the_stubs_zero(release, tmp_path):
    student, python = release
    run = make_grade(student, python, f"ARGS=--json {tmp_path / 'grade.json'}")
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads((tmp_path / "grade.json").read_text())
    assert document["score"] == 0 and len(document["items"]) == len(
        load(student / "rubric.yaml").items)
    assert {i["status"] for i in document["items"]} == {"missing"}
    assert "not implemented" in run.stdout


def test_make_grade_gives_the_reference_full_marks(release, tmp_path):
    student, python = release
    submission = tmp_path / "submission"
    shutil.copytree(REFERENCE, submission, ignore=shutil.ignore_patterns("__pycache__"))
    out = {kind: tmp_path / f"grade.{kind}" for kind in ("json", "xml", "md")}
    run = make_grade(student, python, f"SUBMISSION={submission}",
                     f"ARGS=--json {out['json']} --junit {out['xml']} --markdown {out['md']}")
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(out["json"].read_text())
    assert all(i["status"] == "passed" for i in document["items"]), document
    assert document["score"] >= document["max_score"] == 200
    assert len(ET.parse(out["xml"]).getroot().findall(".//testcase")) == len(document["items"])
    assert out["md"].read_text().startswith(f"# Grade: {document['score']:g}/200")
    notices = subprocess.run([str(python), "-m", "grader.formats.classroom", str(out["json"])],
                             cwd=student, capture_output=True, text=True, check=True).stdout
    assert f"Points {document['score']:g}/200" in notices


def test_hidden_items_and_their_tests_stay_out(tmp_path):
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text((REPO / "rubric.yaml").read_text().replace(
        "    extra_credit: true\n", "    extra_credit: true\n    visibility: hidden\n", 1))
    assert {i.id for i in load(rubric).items if i.visibility == "hidden"} == {"micrograd.deep"}
    student = build_student(tmp_path / "student", rubric)  # also collects its grading tests
    public = load(student / "rubric.yaml")
    assert "micrograd.deep" not in {i.id for i in public.items}
    assert len(public.items) == len(load(rubric).items) - 1
    for path in student.rglob("*"):
        if path.is_file():
            assert "micrograd.deep" not in path.read_text(), path
    suite = (student / "grader" / "suites" / "test_micrograd.py").read_text()
    assert "test_a_100000_node_chain" not in suite and "test_random_graphs" in suite
