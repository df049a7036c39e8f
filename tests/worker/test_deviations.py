"""An engine spelled otherwise is told what was found and what the course expects, in one
line (``grader.worker.deviations``), and a verdict many tests share is said once."""

from __future__ import annotations

import pytest

from grader.grading.scoring import feedback_text
from grader.worker.deviations import deviation


class Value:
    def __init__(self, data, _children=()):
        self.data = data
        self._children = tuple(_children)
        self._backwards = lambda: None


def error_of(action) -> AttributeError:
    with pytest.raises(AttributeError) as caught:
        action()
    return caught.value


def test_operands_kept_under_another_name_are_named():
    leaf = Value(1.0)
    for node in (leaf, Value(2.0, (leaf, leaf))):
        assert deviation(error_of(lambda node=node: node._prev)) == (
            "not implemented: _prev (your Value keeps its operands in `_children`; "
            "this course's API calls them `_prev`)"
        )


def test_a_near_spelling_is_named():
    assert deviation(error_of(lambda: Value(1.0)._backward)) == (
        "not implemented: _backward (your Value has `_backwards`: is it that?)"
    )


def test_what_is_simply_missing_is_not_guessed():
    assert deviation(error_of(lambda: Value(1.0).tanh)) is None
    assert deviation(AttributeError("no object")) is None


def test_tests_with_the_same_verdict_are_said_once():
    def failure(test: str, reason: str) -> dict:
        return {"test": test, "reason": reason, "details": [], "snippet": "", "bugs": []}

    text = feedback_text(
        [],
        [failure("test_a", "not implemented: _prev"), failure("test_b", "wrong gradient")]
        + [failure("test_c", "not implemented: _prev")],
        "",
    )
    assert text.splitlines() == [
        "test_a, test_c: not implemented: _prev",
        "test_b: wrong gradient",
    ]
