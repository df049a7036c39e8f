"""Arrays in the worker's answers, decoded for the checks.

No shape is checked here: an array of the wrong shape is a wrong answer (``judge.mismatch``
says ``expected shape X, got shape Y``, and a gradient left unsummed by broadcasting is a named
bug), never an invalid one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grader.language.verdicts import WrongAnswer
from grader.worker import protocol


def arrays(answer: dict[str, Any], key: str, labels: list[str]) -> list[np.ndarray | None]:
    """The arrays of ``answer[key]``, one per label (a missing gradient decodes to None), or
    ``protocol.InvalidAnswer``."""
    items = protocol.field(answer, key, list)
    if len(items) != len(labels):
        raise protocol.InvalidAnswer(f"{len(items)} {key} for {len(labels)} nodes")
    return [
        None if item is None else protocol.decode_array(item, label)
        for item, label in zip(items, labels, strict=True)
    ]


def decoded(
    answer: dict[str, Any], key: str, labels: list[str], snippet: str
) -> list[np.ndarray | None]:
    """``arrays``, where an answer that is not arrays is the student's error, shown with
    ``snippet``."""
    try:
        return arrays(answer, key, labels)
    except protocol.InvalidAnswer as exc:
        raise WrongAnswer("error", f"invalid answer: {exc}", [], snippet) from None
