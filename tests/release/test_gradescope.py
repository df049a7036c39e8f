"""Gradescope, as Gradescope runs it: build autograder.zip, unzip it into a fake /autograder,
run the zip's own setup.sh (a fresh venv, ``pip install source``: a regular install, as on
Gradescope), then its run_autograder on a correct and a buggy engine of every shipped course,
and validate results.json against Gradescope's format.

Where this differs from Gradescope's container: setup.sh runs with GRADER_APT=0, since a test
has neither root's apt nor its network (bubblewrap and Python come from this machine instead),
and the fake tree sits in a temporary folder (AUTOGRADER_ROOT) rather than at /autograder."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import jsonschema
import pytest

from grader.grading.rubric import load
from grader.layout import shipped_courses
from grader.release.release import build_gradescope
from grader.report.formats.gradescope import SCHEMA
from grader.sandbox.sandbox import bwrap_status
from tests.helpers.planted import one_bug_of, plant

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("gradescope")]  # one autograder each

# The schema the issue gives, independently of the one the grader validates against.
ISSUE_SCHEMA = {
    "type": "object",
    "required": ["score", "execution_time", "output", "visibility", "stdout_visibility", "tests"],
    "properties": {
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "number", "score", "max_score", "status", "output"],
                "properties": {
                    "status": {"enum": ["passed", "failed"]},
                    "output_format": {"const": "md"},
                },
            },
        }
    },
}
SEED = 777
Installer = Callable[[str], Path]


def unzip(course: str, where: Path) -> Path:
    """``make gradescope COURSE=course``'s zip, unzipped as Gradescope does into
    ``where/source``; the fake /autograder."""
    archive = build_gradescope(where.parent / f"dist-{where.name}", seed=SEED, course=course)
    with zipfile.ZipFile(archive) as handle:
        modes = {info.filename: info.external_attr >> 16 for info in handle.infolist()}
        assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111
        assert not any(name.startswith(("tests/", "exercises/", "reference/")) for name in modes)
        handle.extractall(where / "source")
    return where


def setup_sh(root: Path) -> subprocess.CompletedProcess[str]:
    """The zip's own setup.sh, against ``root`` instead of /autograder."""
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "GRADER_APT": "0"}
    return subprocess.run(
        ["bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True
    )


@pytest.fixture(scope="session")  # one image per course and run: see tests/conftest.py
def installed(tmp_path_factory) -> Installer:
    """``installed(course)``: a fake /autograder whose setup.sh has run, built once per course
    and run (an install costs half a minute)."""
    built: dict[str, Path] = {}

    def install(course: str) -> Path:
        if course not in built:
            root = unzip(course, tmp_path_factory.mktemp(f"autograder-{course}"))
            done = setup_sh(root)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            built[course] = root
        return built[course]

    return install


@contextlib.contextmanager
def rubric_changed(root: Path, course: str, old: str, new: str) -> Iterator[None]:
    """The course's rubric with ``old`` (once) made ``new``, in the image's source and in its
    installed package, as if the instructor had changed it before uploading the zip (the
    recordings and the reference's check, made by setup.sh for the rubric as it was, are
    keyed by the rubric's digest: the grade draws again and checks the reference again)."""
    rubrics = [root / "source" / "courses" / course / "rubric.yaml"]
    rubrics.append(installed_courses(root) / course / "rubric.yaml")
    saved = [path.read_text() for path in rubrics]
    for path, text in zip(rubrics, saved, strict=True):
        assert old in text, path
        path.write_text(text.replace(old, new, 1))
    try:
        yield
    finally:
        for path, text in zip(rubrics, saved, strict=True):
            path.write_text(text)


def run_autograder(root: Path, submission: Path) -> tuple[dict, str]:
    """Grade ``submission`` as Gradescope does: results.json (validated) and the stdout."""
    for folder in ("submission", "results"):
        shutil.rmtree(root / folder, ignore_errors=True)
    shutil.copytree(submission, root / "submission")
    (root / "results").mkdir()
    (root / "results" / "results.json").write_text('{"score": 100}')  # a forged result
    done = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        env={**os.environ, "AUTOGRADER_ROOT": str(root)},
        timeout=600,
        capture_output=True,
        text=True,
    )
    document = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(document, ISSUE_SCHEMA)
    jsonschema.validate(document, SCHEMA)
    return document, done.stdout


def installed_courses(root: Path) -> Path:
    python = root / "venv" / "bin" / "python"
    code = "from grader.layout import COURSES; print(COURSES)"
    return Path(subprocess.check_output([str(python), "-I", "-c", code], text=True).strip())


@pytest.mark.parametrize("course", shipped_courses())
def test_every_course_grades_its_reference_to_full_marks_in_a_regular_install(installed, course):
    root = installed(course)
    courses = installed_courses(root)
    assert courses.is_relative_to(root / "venv") and [p.name for p in courses.iterdir()] == [course]
    document, stdout = run_autograder(root, _reference(root, course))
    assert [t["status"] for t in document["tests"]] == ["passed"] * len(document["tests"])
    rubric = load(courses / course / "rubric.yaml")
    assert [t["name"].split(":")[0] for t in document["tests"]] == [i.id for i in rubric.items]
    # full marks of the reference's edition: an item its edition lacks, or code the course
    # gives, is 0 of 0 (Karpathy's repository has no tanh, its lecture no relu)
    assert document["score"] == sum(t["max_score"] for t in document["tests"]) > 0
    if bwrap_status()[0]:  # the image's own sandbox, not only its grades
        assert "bubblewrap: private filesystem view" in stdout, stdout


@pytest.mark.parametrize("course", shipped_courses())
def test_a_planted_bug_loses_its_own_item_in_a_regular_install(installed, tmp_path, course):
    root = installed(course)
    bug = one_bug_of(course)
    document, _ = run_autograder(root, plant(tmp_path, bug, reference=_reference(root, course)))
    failed = {t["name"].split(":")[0] for t in document["tests"] if t["status"] == "failed"}
    assert bug.item in failed
    assert failed <= {bug.item, f"{bug.item.split('.')[0]}.graphs"}


def _reference(root: Path, course: str) -> Path:
    """The course's reference as the zip shipped it (root reads it; students never do)."""
    return root / "source" / "courses" / course / "reference"


def test_an_engine_that_reads_the_installed_reference_earns_nothing_by_it(installed, tmp_path):
    """The installed package carries every course's reference: the student's code, run by the
    image's own grader, must find none of it (read, it would break tanh on purpose)."""
    root = installed("course")
    secret = installed_courses(root) / "course" / "reference" / "micrograd" / "engine.py"
    submission = plant(tmp_path, reference=_reference(root, "course"))
    engine = submission / "micrograd" / "engine.py"
    probe = f"try:\n    open({str(secret)!r}).read()\n    LEAK = True\nexcept OSError:\n"
    probe += "    LEAK = False\n"
    text = engine.read_text().replace("1.0 - t * t", "(1.0 - t) if LEAK else (1.0 - t * t)")
    engine.write_text(probe + text)
    document, _ = run_autograder(root, submission)
    by_id = {t["name"].split(":")[0]: t for t in document["tests"]}
    assert by_id["micrograd.ops.tanh"]["status"] == "passed", by_id["micrograd.ops.tanh"]


def test_results_json_has_every_item_and_hides_hidden_ones(installed, tmp_path):
    root = installed("course")
    bug = one_bug_of("course")
    hidden = ("    extra_credit: true\n", "    extra_credit: true\n    visibility: hidden\n")
    with rubric_changed(root, "course", *hidden):
        document, _ = run_autograder(
            root, plant(tmp_path, bug, reference=_reference(root, "course"))
        )
        items = load(root / "source" / "courses" / "course" / "rubric.yaml").items
    tests = document["tests"]
    assert [t["name"].split(":")[0] for t in tests] == [i.id for i in items]
    assert [t["number"] for t in tests] == [str(n) for n in range(1, len(items) + 1)]
    by_id = {t["name"].split(":")[0]: t for t in tests}
    tanh = by_id["micrograd.ops.tanh"]
    assert (tanh["score"], tanh["status"]) == (0, "failed")
    assert "tanh-derivative" in tanh["output"] and "```" in tanh["output"]
    assert by_id["micrograd.deep"]["visibility"] == "after_due_date"
    assert all(t["visibility"] == "visible" for k, t in by_id.items() if k != "micrograd.deep")
    assert document["score"] == sum(t["score"] for t in tests) < sum(t["max_score"] for t in tests)
    assert "after the due date" in document["output"]


def test_past_its_deadline_every_item_is_still_reported(installed, tmp_path):
    root = installed("course")
    config = root / "source" / "gradescope.json"
    saved = config.read_text()
    config.write_text(json.dumps({**json.loads(saved), "deadline_s": 0.5}))
    (tmp_path / "engine.py").write_text("class Value:\n    pass\n")
    try:
        document, _ = run_autograder(root, tmp_path)
    finally:
        config.write_text(saved)
    assert len(document["tests"]) == len(
        load(installed_courses(root) / "course" / "rubric.yaml").items
    )
    assert document["score"] == 0
    assert all("did not finish within 0.5 s" in t["output"] for t in document["tests"])


@pytest.mark.parametrize("missing", ["profile.yaml", "rubric.yaml"])
def test_a_source_without_a_course_file_fails_to_install_naming_it(tmp_path, missing):
    root = unzip("karpathy-micrograd", tmp_path / "autograder")
    (root / "source" / "courses" / "karpathy-micrograd" / missing).unlink()
    done = setup_sh(root)
    assert done.returncode != 0
    assert f"courses/karpathy-micrograd: no {missing}" in done.stdout + done.stderr


def test_an_image_without_its_reference_tells_the_student_one_line(installed, tmp_path):
    root = installed("course")
    reference = installed_courses(root) / "course" / "reference"
    aside = tmp_path / "aside"
    shutil.move(reference, aside)
    try:
        document, stdout = run_autograder(root, _reference(root, "course"))
    finally:
        shutil.move(aside, reference)
    assert document["score"] == 0 and document["tests"] == []
    assert document["output"].count("\n") == 0 and "not your fault" in document["output"]
    assert "no reference solution" in stdout and "make gradescope" in stdout


def test_every_grade_replays_the_runs_recorded_at_setup_to_the_same_results(installed, tmp_path):
    """setup.sh records the reference's runs at the secret seed, where only root reads them;
    a submission's grade replays them (a container grades once: nothing else could be
    replayed) and reports what a grade that draws every example again reports."""
    root = installed("course")
    recordings = root / "source" / "recordings"
    answers = root / "source" / "recordings-answers"  # the reference's, beside them
    assert len(list(recordings.glob("*.json"))) > 10 and list(answers.glob("*.json"))
    kept = [recordings, *recordings.iterdir(), answers, *answers.iterdir()]
    assert all(path.stat().st_mode & 0o077 == 0 for path in kept)
    bug = plant(tmp_path / "bug", one_bug_of("course"), reference=_reference(root, "course"))
    aside = tmp_path / "aside"
    for folder in (recordings, answers):
        shutil.copytree(folder, aside / folder.name)
    try:
        replayed, _ = run_autograder(root, bug)
        for folder in (recordings, answers):
            shutil.rmtree(folder)
        drawn, _ = run_autograder(root, bug)
    finally:
        for folder in (recordings, answers):
            shutil.rmtree(folder, ignore_errors=True)
            shutil.copytree(aside / folder.name, folder)
    assert replayed["tests"] == drawn["tests"]
    assert replayed["score"] == drawn["score"] < sum(t["max_score"] for t in drawn["tests"])
