"""Explicit examples that reach every dimension of a grading test's contract at every seed.

Random draws reach a documented kind of input (a rank, an ``axes`` form, several prepended
axes...) only by luck of the seed. A test marked ``stratified`` runs, before its drawn
examples, the fixed ones ``grader.language.coverage`` builds for the graded course's ops and
domain, chosen when the run's profile is known (``on_course`` picks its ops the same way).
They take the place of as many drawn examples: the test's number of examples, and so its
time, stays the rubric's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hypothesis import example

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


def use_strata(test: Callable[..., Any], examples: int, least: int) -> int:
    """Put ``test``'s explicit examples first (replacing any of an earlier run in this
    process); the number of examples left to draw: at least ``least`` without explicit ones,
    else what they leave of ``examples`` (at least one), so the total stays ``examples``."""
    strata = getattr(test, ATTRIBUTE, None)
    cases = strata() if strata is not None else []
    test.hypothesis_explicit_examples = []  # type: ignore[attr-defined]
    for case in reversed(cases):  # Hypothesis runs them last-added first
        example(**case)(test)
    return max(1 if cases else least, examples - len(cases))
