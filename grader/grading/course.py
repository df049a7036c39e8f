"""The course API a grading run grades, for the strategies that draw only the ops it has.

Hypothesis takes a test's strategy when the suite is imported, before the run knows its
rubric: a batch lane imports the suites once, then grades every submission in a fork of
itself. ``on_course`` therefore picks its ops when it draws, from the profile the plugin
names for the run (``use``), one run per process, and the domain of input forms its contract
specifies (``grader.language.domains``). Its draws are the strategy's own, with no draw of its
own in between: on this course's profile, which has every op, concept and form, the examples
are the same as the plain strategy's.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from hypothesis.strategies import SearchStrategy

from grader.language import profiles
from grader.language.domains import EVERY_FORM, Domain
from grader.language.profiles import Profile

_profile: Profile | None = None


def use(profile: Profile) -> None:
    """The profile of this process's grading run."""
    global _profile
    _profile = profile


@contextlib.contextmanager
def using(profile: Profile | None) -> Iterator[None]:
    """``profile`` (None: this course's) for the draws of a block, then the run's own again: a
    measurement made in a process that also grades (the project's tests, an audit) must not
    change what it draws."""
    global _profile
    before, _profile = _profile, profile
    try:
        yield
    finally:
        _profile = before


def current() -> Profile:
    """The run's profile; this course's outside a grading run."""
    return _profile or profiles.course()


Build = Callable[[tuple[str, ...], Domain], SearchStrategy[Any]]


def resolve(kind: str, needs: Sequence[str]) -> tuple[tuple[str, ...], Domain]:
    """Those of ``needs`` the run's profile gives its assignment of ``kind``, and the input
    forms that assignment's contract specifies."""
    api = current().of_kind(kind)
    had = tuple(n for n in needs if api is None or api.has(n))
    return had, EVERY_FORM if api is None else api.domain


class OnCourse(SearchStrategy[Any]):
    """``build(had, domain)``, ``had`` being those of ``needs`` (ops, or other needs of
    ``AssignmentProfile.has``) that the run's profile gives its assignment of ``kind``, and
    ``domain`` the input forms that assignment's contract specifies."""

    def __init__(self, kind: str, needs: Sequence[str], build: Build) -> None:
        super().__init__()
        self.kind, self.needs = kind, tuple(needs)
        self._build = functools.cache(build)

    def resolved(self) -> SearchStrategy[Any]:
        return self._build(*resolve(self.kind, self.needs))

    def calc_label(self) -> int:
        return self.resolved().label

    def do_draw(self, data: Any) -> Any:
        return self.resolved().do_draw(data)

    def __repr__(self) -> str:
        return f"on_course({self.kind!r}, {self.needs!r})"


def on_course(kind: str, needs: Sequence[str], build: Build) -> SearchStrategy[Any]:
    """A strategy drawing ``build(had, domain)``, ``had`` being those of ``needs`` the graded
    course's API has for its assignment of ``kind`` (the ops a graph may use, or whether a draw
    may use a concept: ``walk.frozen_leaves``), ``domain`` the forms its contract specifies."""
    return OnCourse(kind, needs, build)
