"""End to end: the grading pipeline on the reference, the stubs and engines with planted bugs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.grading.scoring import UNWRITTEN_NOTE
from tests.helpers.grading import ENGINES, EXERCISES, REFERENCE, grade_command, grade_items, planted

MICRO = "micrograd/engine.py"


@pytest.fixture(scope="module")
def reference_grade():
    return grade_items(REFERENCE)


def test_reference_gets_full_marks(reference_grade):
    assert all(item["status"] == "passed" for item in reference_grade.values()), {
        k: v["feedback"] for k, v in reference_grade.items() if v["status"] != "passed"
    }
    assert all(item["score"] == item["max_score"] for item in reference_grade.values())


def test_stubs_get_zero_with_not_implemented():
    """Code that does nothing earns nothing: micrograd.accumulate, which grades the closures
    of ops that work, has none to grade (it is not gradable until the ops, not written yet,
    pass: its tests count and earn nothing), nor has babygrad.broadcasting, which grades the
    reduction of ops that work."""
    items = grade_items(EXERCISES)
    for item, op in (
        ("micrograd.accumulate", "micrograd.ops.add"),
        ("babygrad.broadcasting", "babygrad.ops.add"),
    ):
        waiting = items.pop(item)
        assert (waiting["status"], waiting["score"]) == ("not_gradable", 0)
        assert waiting["reason"] == f"not gradable until {op} passes"
        assert UNWRITTEN_NOTE in waiting["feedback"]
    assert {item["status"] for item in items.values()} == {"missing"}
    assert sum(item["score"] for item in items.values()) == 0
    assert all("not implemented" in item["reason"] for item in items.values())


def test_an_engine_written_as_the_notes_write_it_gets_full_marks():
    items = grade_items(ENGINES / "notes_style", assignment="micrograd")
    regular = {k: v for k, v in items.items() if k != "micrograd.deep"}
    assert all(v["status"] == "passed" for v in regular.values()), {
        k: v["feedback"] for k, v in regular.items() if v["status"] != "passed"
    }
    assert items["micrograd.deep"]["status"] == "error"
    assert "RecursionError" in items["micrograd.deep"]["reason"]


def test_overwrite_bug_loses_accumulate_with_the_smallest_counterexample(tmp_path):
    submission = planted(
        tmp_path,
        {
            MICRO: [
                ("self.grad += out.grad\n", "self.grad = out.grad\n"),
                ("other.grad += out.grad", "other.grad = out.grad"),
            ]
        },
    )
    items = grade_items(
        submission,
        assignment="micrograd",
        only=["micrograd.accumulate", "micrograd.ops", "micrograd.backward"],
    )
    accumulate = items["micrograd.accumulate"]
    assert accumulate["status"] == "partial"  # mul, pow, tanh, exp, relu still add into grads
    assert "overwrite-grad" in accumulate["bugs"]
    assert (
        "a = Value(1.0)\nb = a + a\na.grad = 0.5  # already there, from another use\n"
        "b.grad = 1.0\nb._backward()\nprint(a.grad)"
    ) in accumulate["feedback"]
    assert "a.grad (held 0.5 before; its uses add 2): expected 2.5, got 1" in accumulate["feedback"]
    others = {k: v["status"] for k, v in items.items() if k != "micrograd.accumulate"}
    assert set(others.values()) == {"passed"}, others


@pytest.mark.slow
def test_a_hang_costs_only_the_item_it_was_on(tmp_path, fast_rubric):
    submission = planted(
        tmp_path,
        {
            MICRO: [
                (
                    "t = math.tanh(self.data)\n",
                    "t = math.tanh(self.data)\n        while True:\n            pass\n",
                )
            ]
        },
    )
    items = grade_items(
        submission,
        assignment="micrograd",
        only=["micrograd.ops", "micrograd.accumulate"],
        rubric=fast_rubric,
    )
    assert items["micrograd.ops.tanh"]["status"] == "timeout"
    assert (
        "test_tanh_accumulates: not gradable until micrograd.ops.tanh passes"
        in items["micrograd.accumulate"]["feedback"]
    )
    assert "timed out" in items["micrograd.ops.tanh"]["feedback"]
    assert {k: v["status"] for k, v in items.items() if k != "micrograd.ops.tanh"} == {
        k: "passed" for k in items if k != "micrograd.ops.tanh"
    }


def test_a_crash_costs_only_the_item_it_was_on(tmp_path):
    submission = planted(
        tmp_path,
        {MICRO: [('out = Value(math.exp(self.data), (self,), "exp")', "import os; os._exit(0)")]},
    )
    items = grade_items(submission, assignment="micrograd", only=["micrograd.ops"])
    assert items["micrograd.ops.exp"]["status"] == "error"
    assert "exit" in items["micrograd.ops.exp"]["reason"]
    assert all(v["status"] == "passed" for k, v in items.items() if k != "micrograd.ops.exp")


def test_a_wrong_gradient_for_the_second_operand_fails_its_op(tmp_path):
    """Every operand's gradient is compared, not only the first's: mul passing the second
    operand its own value (the first's gradient right) loses mul."""
    submission = planted(
        tmp_path,
        {MICRO: [("other.grad += self.data * out.grad", "other.grad += other.data * out.grad")]},
    )
    items = grade_items(submission, assignment="micrograd", only=["micrograd.ops.mul"])
    mul = items["micrograd.ops.mul"]
    assert (mul["status"], mul["score"]) == ("failed", 0)
    assert mul["reason"] == "wrong gradient in backward"
    assert "backward: gradient for b" in mul["feedback"]
    assert "backward: gradient for a" not in mul["feedback"]


@pytest.mark.slow
def test_same_submission_same_result(tmp_path):
    """Two grades that each record what they drew to a folder of their own: neither replays the
    other (a replay repeats the examples it recorded, whatever the seed would draw), and both
    drew the same examples, not only reached the same shrunk verdict."""
    submission = planted(tmp_path, {MICRO: [("1.0 - t * t", "1.0 - t")]})
    first, second = (_graded_and_drawn(submission, tmp_path / name) for name in ("a", "b"))
    assert first == second
    items, drawn = first
    assert items["micrograd.ops.tanh"]["status"] == "failed"
    assert "tanh-derivative" in items["micrograd.ops.tanh"]["bugs"]
    assert drawn


def _graded_and_drawn(submission: Path, recordings: Path) -> tuple[dict, dict[str, str]]:
    """The items of a grade of tanh recording to ``recordings`` (a new folder), and the runs
    it recorded there (each named by its content)."""
    recordings.mkdir()
    items = grade_items(
        submission, assignment="micrograd", only=["micrograd.ops.tanh"], replay=recordings
    )
    return items, {path.name: path.read_text() for path in recordings.iterdir()}


def test_cli_json_document_and_exit_codes(tmp_path):
    out = tmp_path / "grade.json"
    run = grade_command(
        "--submission",
        EXERCISES,
        "--assignment",
        "micrograd",
        "--only",
        "micrograd.topo",
        "--json",
        out,
        "--fail-under",
        "50",
        "--seed",
        "918273645",
    )
    assert run.returncode == 1, run.stdout + run.stderr
    document = json.loads(out.read_text())
    assert document["schema"] == 1 and document["seed"] == "secret"
    assert document["assignment"] == "micrograd"
    assert [i["id"] for i in document["items"]] == ["micrograd.topo"]
    assert document["items"][0]["status"] == "missing"
    assert "918273645" not in run.stdout + out.read_text()
    assert grade_command("--submission", tmp_path / "nowhere").returncode == 2


def test_a_bad_rubric_names_file_line_and_fix(tmp_path):
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(
        (REFERENCE.parent / "rubric.yaml").read_text().replace("points: 10", "points: ten", 1)
    )
    run = grade_command("--submission", REFERENCE, "--rubric", rubric)
    assert run.returncode == 2
    said = run.stdout.replace("\n", "")  # the console wraps a long path at its width
    assert f"{rubric}:" in said and "points" in said and "docs/course-authors.md" in said


def test_a_wrong_oracle_never_fails_a_correct_engine(tmp_path):
    """The second oracle must confirm before any verdict: a buggy 'reference' cannot fail a
    correct engine, its examples are skipped instead."""
    broken_reference = planted(tmp_path, {MICRO: [("1.0 - t * t", "1.0 - t")]})
    items = grade_items(
        REFERENCE,
        assignment="micrograd",
        reference=broken_reference,
        only=["micrograd.ops.tanh", "micrograd.graphs"],
    )
    assert {v["status"] for v in items.values()} == {"passed"}


def test_grading_without_the_reference_uses_torch_and_finite_differences(tmp_path):
    submission = planted(tmp_path, {MICRO: [("1.0 - t * t", "1.0 - t")]})
    items = grade_items(submission, assignment="micrograd", reference=None, only=["micrograd.ops"])
    assert items["micrograd.ops.tanh"]["status"] == "failed"
    assert all(v["status"] == "passed" for k, v in items.items() if k != "micrograd.ops.tanh")
