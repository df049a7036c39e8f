"""Explicit examples that reach every dimension of a grading test's contract at every seed.

Random draws reach a documented kind of input (a rank, an ``axes`` form, several prepended
axes...) only by luck of the seed. A test marked ``stratified`` runs, after its drawn
examples pass, the fixed ones ``grader.language.coverage`` builds for the graded course's ops
and domain, chosen when the run's profile is known (``on_course`` picks its ops the same way).
After, not before (as Hypothesis's own explicit examples): a mistake the draws find is shown
shrunk to its smallest example, and a fixed example is shown only where no draw fails. They
take the place of as many drawn examples: the test's number of examples, and so its time,
stays the rubric's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from grader.grading import course
from grader.language.domains import Domain

ATTRIBUTE = "grader_strata"
F = TypeVar("F", bound=Callable[..., Any])
Build = Callable[[tuple[str, ...], Domain], Sequence[Any]]
"""``build(had, domain)`` (as ``on_course``'s): the explicit examples."""


def stratified(
    build: Build, kind: str = "tensor", needs: Sequence[str] = (), names: str = "example"
) -> Callable[[F], F]:
    """Give a Hypothesis test the explicit examples ``build`` makes for the graded course:
    each the value of its argument ``names``, or a tuple of its arguments' values (``names``
    separated by commas)."""
    keys = names.split(",")

    def examples() -> list[dict[str, Any]]:
        cases = build(*course.resolve(kind, needs))
        return [dict(zip(keys, case if len(keys) > 1 else (case,), strict=True)) for case in cases]

    def mark(test: F) -> F:
        setattr(test, ATTRIBUTE, examples)
        return test

    return mark


def explicit(test: Callable[..., Any]) -> list[dict[str, Any]]:
    """``test``'s explicit examples for the graded course, as keyword arguments."""
    strata = getattr(test, ATTRIBUTE, None)
    return strata() if strata is not None else []


def drawn_count(explicit: int, examples: int, least: int) -> int:
    """How many examples to draw besides ``explicit`` ones: at least ``least`` without any,
    else what they leave of ``examples`` (at least one), so the total stays ``examples``."""
    return max(1 if explicit else least, examples - explicit)
