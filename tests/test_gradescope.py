"""Gradescope: build autograder.zip, run its run_autograder against a fake /autograder tree."""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path

import jsonschema
import pytest

from grader.grading.rubric import load
from grader.layout import COURSES
from grader.report.formats.gradescope import SCHEMA
from grader.workflows.release import build_gradescope
from tests.grading import REFERENCE
from tests.venvs import overlay_venv

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("gradescope")]  # one autograder

# The schema the issue gives, independently of the one the grader validates against.
ISSUE_SCHEMA = {
    "type": "object",
    "required": ["score", "execution_time", "output", "visibility", "stdout_visibility", "tests"],
    "properties": {
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "name",
                    "number",
                    "score",
                    "max_score",
                    "status",
                    "output",
                    "visibility",
                ],
                "properties": {
                    "status": {"enum": ["passed", "failed"]},
                    "output_format": {"const": "md"},
                },
            },
        }
    },
}


@pytest.fixture(scope="session")  # once per run: see tests/conftest.py
def autograder(tmp_path_factory) -> tuple[Path, Path]:
    """A fake /autograder with the unzipped autograder.zip in source/, and a python for it."""
    tmp = tmp_path_factory.mktemp("gradescope")
    archive = build_gradescope(tmp / "dist", seed=777)
    root = tmp / "autograder"
    with zipfile.ZipFile(archive) as handle:
        modes = {info.filename: info.external_attr >> 16 for info in handle.infolist()}
        assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111
        assert not any(name.startswith(("tests/", "exercises/")) for name in modes)
        assert {
            "rubric.yaml",
            "reference/micrograd/engine.py",
            "grader/grading/suites/test_micrograd.py",
            "gradescope.json",
        } <= set(modes)
        handle.extractall(root / "source")
    return root, overlay_venv(tmp / "venv", root / "source")


def run_autograder(root: Path, python: Path, submission: dict[str, str]) -> dict:
    for folder in ("submission", "results"):
        subprocess.run(["rm", "-rf", str(root / folder)], check=True)
        (root / folder).mkdir()
    for name, text in submission.items():
        (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / name).write_text(text)
    (root / "results" / "results.json").write_text('{"score": 100}')  # a forged result
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "GRADER_PYTHON": str(python)}
    subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        env=env,
        check=True,
        timeout=300,
        capture_output=True,
    )
    document = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(document, ISSUE_SCHEMA)
    jsonschema.validate(document, SCHEMA)
    return document


def test_results_json_has_every_item_and_hides_hidden_ones(autograder):
    root, python = autograder
    rubric = root / "source" / "rubric.yaml"
    rubric.write_text(
        rubric.read_text().replace(
            "    extra_credit: true\n", "    extra_credit: true\n    visibility: hidden\n", 1
        )
    )
    engine = (REFERENCE / "micrograd" / "engine.py").read_text().replace("1.0 - t * t", "1.0 - t")
    document = run_autograder(root, python, {"hw/engine.py": engine})
    items = load(rubric).items
    tests = document["tests"]
    assert [t["name"].split(":")[0] for t in tests] == [i.id for i in items]
    assert [t["number"] for t in tests] == [str(n) for n in range(1, len(items) + 1)]
    by_id = {t["name"].split(":")[0]: t for t in tests}
    tanh = by_id["micrograd.ops.tanh"]
    assert (tanh["score"], tanh["status"]) == (0, "failed")
    assert "tanh-derivative" in tanh["output"] and "```" in tanh["output"]
    assert by_id["micrograd.ops.add"]["status"] == "passed"
    assert by_id["micrograd.deep"]["visibility"] == "after_due_date"
    assert all(t["visibility"] == "visible" for k, t in by_id.items() if k != "micrograd.deep")
    assert all(
        t["score"] == 0 and "babygrad" in t["output"]
        for k, t in by_id.items()
        if k.startswith("babygrad.")
    )
    assert document["score"] == sum(t["score"] for t in tests) < 100
    assert "hw/engine.py" in document["output"] and "after the due date" in document["output"]


def test_past_its_deadline_every_item_is_still_reported(autograder):
    root, python = autograder
    (root / "source" / "gradescope.json").write_text(json.dumps({"seed": 777, "deadline_s": 0.5}))
    try:
        document = run_autograder(root, python, {"engine.py": "class Value:\n    pass\n"})
    finally:
        (root / "source" / "gradescope.json").write_text(json.dumps({"seed": 777}))
    assert len(document["tests"]) == len(load(root / "source" / "rubric.yaml").items)
    assert document["score"] == 0
    assert all("did not finish within 0.5 s" in t["output"] for t in document["tests"])


def test_another_courses_autograder_carries_its_rubric_reference_and_profile(tmp_path):
    archive = build_gradescope(tmp_path, seed=1, course="karpathy-micrograd")
    course = COURSES / "karpathy-micrograd"
    with zipfile.ZipFile(archive) as handle:
        assert handle.read("rubric.yaml") == (course / "rubric.yaml").read_bytes()
        assert (
            handle.read("courses/karpathy-micrograd/profile.yaml")
            == (course / "profile.yaml").read_bytes()
        )
        engine = "reference/micrograd/engine.py"
        assert handle.read(engine) == (course / engine).read_bytes()
        assert not any(name.startswith("reference/babygrad") for name in handle.namelist())
