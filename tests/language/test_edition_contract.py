"""A contract key an edition changes: CMU 11-785's 2024 HW1 leaves the reduction of broadcast
gradients optional where HW3P1 requires it, so one course folder grades both, told apart by a
file only one of them has (``editions: {<name>: {marker, broadcasts}}``)."""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.language import profiles
from grader.language.editions import NOT_IN_EDITION
from grader.layout import COURSES
from tests.helpers import ENGINES
from tests.helpers.grading import grade_report
from tests.helpers.planted import course_bugs, plant

CMU = COURSES / "cmu-11785-autograd"
EDITIONS = """    editions:
      hw1-2024: {marker: hw1_marker.py, broadcasts: false}
"""
"""A stand-in for the real layouts' markers, which differ by year."""


def _course(tmp_path: Path) -> tuple[Path, Path]:
    """The course with an edition that does not broadcast: its profile and rubric."""
    folder = tmp_path / "course"
    shutil.copytree(CMU, folder, ignore=shutil.ignore_patterns("reference"))
    profile = folder / "profile.yaml"
    text = profile.read_text()
    profile.write_text(text.replace("    items: {", EDITIONS + "    items: {", 1))
    rubric = folder / "rubric.yaml"
    rubric.write_text(
        rubric.read_text().replace("profile: cmu-11785-autograd", "profile: profile.yaml", 1)
    )
    return profile, rubric


def test_an_edition_changes_whether_broadcasting_is_graded(tmp_path):
    profile, rubric = _course(tmp_path)
    own = profiles.load(profile).of("mytorch")
    (edition,) = own.editions
    assert own.has("broadcasting") and not own.in_edition(edition).has("broadcasting")
    averages = next(b for b in course_bugs(_planted()) if b.name == "unbroadcast-averages")
    hw3 = plant(tmp_path / "hw3", averages, reference=CMU / "reference")
    hw1 = plant(tmp_path / "hw1", averages, reference=CMU / "reference")
    (hw1 / "mytorch" / "hw1_marker.py").write_text("")
    only = ["mytorch.broadcasting", "mytorch.add_backward"]  # a test to run in each
    items = {
        name: {i["id"]: i for i in grade_report(upload, rubric=rubric, only=only).items}
        for name, upload in (("hw3", hw3), ("hw1", hw1))
    }
    assert items["hw3"]["mytorch.broadcasting"]["score"] == 0
    broadcasting = items["hw1"]["mytorch.broadcasting"]
    assert (broadcasting["status"], broadcasting["max_score"]) == (NOT_IN_EDITION, 0)


def _planted() -> Path:
    return ENGINES / "cmu-11785-autograd" / "planted.yaml"
