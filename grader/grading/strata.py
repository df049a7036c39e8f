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

from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import Any, TypeVar

from grader.grading import course
from grader.language.domains import Domain

ATTRIBUTE = "grader_strata"
_BUILT: dict[tuple[Any, tuple[str, ...], Domain], tuple[Any, ...]] = {}
"""Each build's examples by the ops and domain it was built for: built once in a process
(a build depends on nothing else, and what it builds is never changed)."""
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
        had, domain = course.resolve(kind, needs)
        if (build, had, domain) not in _BUILT:
            _BUILT[build, had, domain] = tuple(build(had, domain))
        return [
            dict(zip(keys, case if len(keys) > 1 else (case,), strict=True))
            for case in _BUILT[build, had, domain]
        ]

    def mark(test: F) -> F:
        setattr(test, ATTRIBUTE, examples)
        return test

    return mark


def explicit(test: Callable[..., Any]) -> list[dict[str, Any]]:
    """``test``'s explicit examples for the graded course, as keyword arguments."""
    strata = getattr(test, ATTRIBUTE, None)
    return strata() if strata is not None else []


def build_ahead(modules: Iterable[ModuleType]) -> None:
    """Build the explicit examples of every stratified test of ``modules`` for this course,
    ahead of the runs: a lane does, once, and the grading runs it forks find them built
    (0.04 s of CPU in every run, about 3% of a grade that replays)."""
    with course.using(None):
        for test in [value for module in modules for value in vars(module).values()]:
            explicit(test)


def drawn_count(explicit: int, examples: int, least: int) -> int:
    """How many examples to draw besides ``explicit`` ones: at least ``least`` without any,
    else what they leave of ``examples`` (at least one), so the total stays ``examples``."""
    return max(1 if explicit else least, examples - explicit)
