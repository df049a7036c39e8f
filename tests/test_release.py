"""The student release works on its own and leaks nothing: no reference, no solution code, no
hidden item or its grading test. Graded as students grade it: installed into its own
environment by its own ``make grade``, without torch, so finite differences are the only
oracle (where the release once failed ``micrograd.ops.pow`` for every correct engine)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
import yaml

from grader.grading.rubric import load
from grader.release.release import build_student
from tests.grading import REFERENCE, REPO
from tests.test_leaks import assert_valid_workflow
from tests.venvs import assert_confined

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("release")]

BASE_PYTHON = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
OUTER = ("MAKE", "MFLAGS", "PYTEST_", "PYTHON", "VIRTUAL_ENV")
"""Variables (by prefix) of the project's own run (``make test``, pytest-xdist, an activated
venv) that must not reach the release's."""


@pytest.fixture(scope="session")  # once per run: see tests/conftest.py
def student(tmp_path_factory) -> Path:
    return build_student(tmp_path_factory.mktemp("release") / "student")


@pytest.fixture(scope="session")  # once per run: see tests/conftest.py
def python(student, tmp_path_factory) -> Path:
    """The release's own environment, made by its own Makefile as a student's first ``make
    grade`` makes it (``pip install -e .`` from the release's pyproject), outside the release
    folder so the leak checks see only what was built. Not an overlay of the project's venv:
    that one holds torch, which made a second oracle skip every example where finite
    differences were wrong; here only what the release declares is installed, so a missing
    dependency or an oracle that is not there shows as it would for a student."""
    venv = tmp_path_factory.mktemp("venv")
    venv.chmod(0o755)  # as `python -m venv` makes it: pytest's 0700 would keep the worker out
    install = subprocess.run(
        ["make", "-s", f"{venv}/.installed", f"VENV={venv}", f"PYTHON={BASE_PYTHON}"],
        cwd=student,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    python = venv / "bin" / "python"
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.util, grader; "
            "print(importlib.util.find_spec('torch'), grader.__file__)",
        ],
        cwd=venv,
        env=environment(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert where == ["None", str(student / "grader" / "__init__.py")], where
    return python


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(OUTER)}


def solution_blocks() -> list[str]:
    """Every fenced solution block of the reference, and each of its longer lines; comments
    are instructions the stubs keep. (Code that does a student's work written otherwise is
    ``tests/test_leaks.py``'s.)"""
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
            elif block is not None and not line.strip().startswith("#"):
                block.append(line)
    return found


def make_grade(student: Path, python: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "-s", "grade", f"VENV={python.parent.parent}", *args],
        cwd=student,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_contents_and_no_leaks(student):
    names = {p.relative_to(student).as_posix() for p in student.rglob("*") if p.is_file()}
    assert {
        "Makefile",
        ".gitignore",
        "README.md",
        "rubric.yaml",
        "pyproject.toml",
        ".github/workflows/classroom.yml",
        "exercises/micrograd/engine.py",
        "grader/grading/suites/test_babygrad.py",
    } <= names
    assert not any(n.startswith(("reference/", "tests/")) or "__pycache__" in n for n in names)
    texts = [p.read_text() for p in student.rglob("*") if p.is_file()]
    blocks = solution_blocks()
    assert len(blocks) > 40
    leaked = [b for b in blocks if any(b in text for text in texts)]
    assert not leaked, leaked[:3]
    workflow = yaml.safe_load((student / ".github/workflows/classroom.yml").read_text())
    assert workflow["permissions"]["checks"] == "write"
    steps = " ".join(str(s.get("run", "")) for s in workflow["jobs"]["grade"]["steps"])
    assert "grader.report.formats.classroom" in steps and "GITHUB_STEP_SUMMARY" in steps
    assert "apparmor_restrict_unprivileged_userns=0" in steps and "torch" not in steps
    assert_valid_workflow(student / ".github/workflows/classroom.yml")
    readme = (student / "README.md").read_text()
    assert "advisory" in readme and "no solution" in readme


def test_make_grade_gives_the_stubs_zero(student, python, tmp_path):
    run = make_grade(student, python, f"ARGS=--json {tmp_path / 'grade.json'}")
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads((tmp_path / "grade.json").read_text())
    assert document["score"] == 0 and len(document["items"]) == len(
        load(student / "rubric.yaml").items
    )
    statuses = {i["id"]: i["status"] for i in document["items"]}
    # accumulate grades the closures of ops that work, broadcasting the reduction of ops that
    # work: none does (tests/test_grading.py)
    assert {i for i, s in statuses.items() if s == "not_gradable"} <= {
        "micrograd.accumulate",
        "babygrad.broadcasting",
    }
    assert set(statuses.values()) <= {"missing", "not_gradable"}
    assert "not implemented" in run.stdout


SEEDS = [None, 1, 20261123, 918_273_645, 4_000_000_007]
"""The release's default (the public rubric's seed), then four more."""


@pytest.mark.parametrize("seed", SEEDS)
def test_make_grade_gives_the_reference_full_marks(student, python, tmp_path, seed):
    submission = tmp_path / "exercises"
    shutil.copytree(REFERENCE, submission, ignore=shutil.ignore_patterns("__pycache__"))
    out = {kind: tmp_path / f"grade.{kind}" for kind in ("json", "xml", "md")}
    chosen = "" if seed is None else f"--seed {seed} "
    run = make_grade(
        student,
        python,
        f"SUBMISSION={submission}",
        f"ARGS={chosen}--json {out['json']} --junit {out['xml']} --markdown {out['md']}",
    )
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(out["json"].read_text())
    assert_confined(document["protections"])
    assert document["oracles"] == ["finite differences"]
    assert "graded on a single oracle, finite differences" in " ".join(run.stdout.split())
    lost = {
        i["id"]: f"{i['status']}: {i['feedback'][:1500]}"
        for i in document["items"]
        if i["status"] != "passed" or i["score"] < i["max_score"]
    }
    assert not lost, "\n\n".join(f"{k}: {v}" for k, v in lost.items())
    assert document["score"] >= document["max_score"] == 200
    assert len(ET.parse(out["xml"]).getroot().findall(".//testcase")) == len(document["items"])
    assert out["md"].read_text().startswith(f"# Grade: {document['score']:g}/200")
    notices = subprocess.run(
        [str(python), "-m", "grader.report.formats.classroom", str(out["json"])],
        cwd=student,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"Points {document['score']:g}/200" in notices


def test_hidden_items_and_their_tests_stay_out(tmp_path):
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(
        (REPO / "rubric.yaml")
        .read_text()
        .replace("    extra_credit: true\n", "    extra_credit: true\n    visibility: hidden\n", 1)
    )
    assert {i.id for i in load(rubric).items if i.visibility == "hidden"} == {"micrograd.deep"}
    student = build_student(tmp_path / "student", rubric)  # also collects its grading tests
    public = load(student / "rubric.yaml")
    assert "micrograd.deep" not in {i.id for i in public.items}
    assert len(public.items) == len(load(rubric).items) - 1
    for path in student.rglob("*"):
        if path.is_file():
            assert "micrograd.deep" not in path.read_text(), path
    suite = (student / "grader" / "grading" / "suites" / "test_micrograd.py").read_text()
    assert "100000_node_chain" not in suite and "test_random_graphs" in suite


WATCH_TIMEOUT = 300.0
"""How long ``make watch`` may take to install nothing and grade once: a bound, not a speed."""


def _git(repo: Path, *args: str) -> str:
    author = {"GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@example.org"}
    committer = {"GIT_COMMITTER_NAME": "s", "GIT_COMMITTER_EMAIL": "s@example.org"}
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        env={**environment(), **author, **committer},
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _watch_grades_once(repo: Path) -> str:
    """``make watch`` started as a student starts it, stopped with Ctrl-C (SIGINT to its
    process group) once it has graded and says it is watching; its output."""
    watch = subprocess.Popen(
        ["make", "-s", "watch", "ASSIGNMENT=micrograd", "ONLY=micrograd.ops.tanh"],
        cwd=repo,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in watch.stdout], daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + WATCH_TIMEOUT
    try:
        while not any(line.startswith("watching") for line in seen):
            left = deadline - time.monotonic()
            assert left > 0 and watch.poll() is None, "".join(seen)
            try:
                seen.append(lines.get(timeout=min(left, 1.0)))
            except queue.Empty:
                continue
        os.killpg(watch.pid, signal.SIGINT)
        watch.wait(timeout=60)
    finally:
        if watch.poll() is None:
            os.killpg(watch.pid, signal.SIGKILL)
            watch.wait()
    return "".join(seen)


def test_the_release_alone_grades_watches_and_commits_only_the_students_files(student, tmp_path):
    """The release copied alone into an empty folder and made a student's repository (as
    Classroom makes one from the template): its own ``make grade`` creates ``.venv`` there and
    grades, its ``make watch`` grades once and stops on Ctrl-C, the README's hand-in zip holds
    both engines, and ``git status`` shows only the file the student changed. (The copy leaves
    out what other tests' installs left in the shared build: ``__pycache__``, ``*.egg-info``.)"""
    repo = tmp_path / "autograd-student"
    shutil.copytree(student, repo, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "the assignment's template")
    engine = repo / "exercises" / "micrograd" / "engine.py"
    engine.write_text(engine.read_text() + "\n# my work\n")
    grade = subprocess.run(
        ["make", "-s", "grade", f"PYTHON={BASE_PYTHON}", "ARGS=--json grade.json"],
        cwd=repo,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert grade.returncode == 0, grade.stdout + grade.stderr
    assert json.loads((repo / "grade.json").read_text())["score"] == 0
    assert "```" not in grade.stdout
    watched = _watch_grades_once(repo)
    assert "micrograd 0/6" in watched and "watching" in watched, watched
    readme = (repo / "README.md").read_text()
    command = readme.split("made with\n  `", 1)[1].split("`", 1)[0]
    subprocess.run(command.split(), cwd=repo, env=environment(), check=True, timeout=60)
    names = zipfile.ZipFile(repo / "submission.zip").namelist()
    assert {"micrograd/engine.py", "babygrad/tensor.py", "babygrad/ops.py"} <= set(names)
    assert _git(repo, "status", "--porcelain").splitlines() == [" M exercises/micrograd/engine.py"]
    ignored = _git(repo, "status", "--porcelain", "--ignored").splitlines()
    assert {"!! .venv/", "!! grade.json", "!! submission.zip"} <= set(ignored), ignored
