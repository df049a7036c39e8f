"""Contract coverage at a seed: per rubric item, how many of its examples reach each dimension
of its course's contract (``grader.language.coverage``), counted from the draws alone.

Each grading test of the suites is run as a grading run would run it (the same seed, number
of examples and explicit examples: ``plugin.draw_settings``) with a body that only writes
down what it was given, so nothing is graded and a count takes seconds. The dimensions an
item must reach are those of its explicit examples (``grader.grading.strata``): every one
the course's contract has for it, which its examples therefore reach at every seed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any

from grader.grading import course
from grader.grading.draws import without_local_constants
from grader.grading.plugin import MIN_EXAMPLES, draw_settings, examples_per_test, in_profile
from grader.grading.rubric import Rubric
from grader.grading.strata import ATTRIBUTE, drawn_count, explicit
from grader.language.coverage import ItemCoverage, dimensions


def _graded_tests(rubric: Rubric) -> Iterator[tuple[str, Callable[..., Any], int]]:
    """Every Hypothesis grading test the rubric's course runs: its item and its examples."""
    for kind in ("scalar", "tensor"):
        if rubric.profile.of_kind(kind) is None:
            continue
        suite = rubric.profile.assignment(kind).suite.removesuffix(".py")
        module = importlib.import_module(f"grader.grading.suites.{suite}")
        for attribute, test in sorted(vars(module).items()):
            marks = [m for m in getattr(test, "pytestmark", ()) if m.name == "rubric"]
            if not attribute.startswith("test_") or not marks or not hasattr(test, "hypothesis"):
                continue
            mark = marks[0]
            item_id = rubric.profile.item_id(mark.args[0])
            needs = mark.kwargs.get("needs", ())
            if item_id in rubric.by_id and in_profile(rubric.profile, item_id, needs):
                share = int(mark.kwargs.get("share", 1))
                yield item_id, test, examples_per_test(rubric.by_id[item_id].examples, share)


def drawn(test: Callable[..., Any], seed: int, examples: int) -> list[dict[str, Any]]:
    """The arguments ``test`` is run with at ``seed`` in a grading run that passes it (its
    drawn examples, then its explicit ones); the test is left as it was."""
    seen: list[dict[str, Any]] = []
    saved, inner = dict(vars(test)), test.hypothesis.inner_test  # type: ignore[attr-defined]

    def write_down(**arguments: Any) -> None:
        seen.append({k: v for k, v in arguments.items() if k != "grading"})

    cases = explicit(test)
    test.hypothesis.inner_test = write_down  # type: ignore[attr-defined]
    try:
        draw_settings(test, seed, drawn_count(len(cases), examples, MIN_EXAMPLES))
        test(grading=None)
    finally:
        test.hypothesis.inner_test = inner  # type: ignore[attr-defined]
        vars(test).clear()
        vars(test).update(saved)
    return seen + cases


def measure(
    rubric: Rubric, seed: int | None = None, stratified_only: bool = False
) -> list[ItemCoverage]:
    """Per item of the rubric (in its order), the coverage of its examples at ``seed`` (the
    rubric's when None), drawn as its course's grading run draws them (this process then
    draws as grading runs do: ``without_local_constants``). ``stratified_only``: only the
    tests with explicit examples, which alone give an item dimensions it must reach."""
    without_local_constants()
    run_seed = rubric.seed if seed is None else seed
    found: dict[str, ItemCoverage] = {}
    with course.using(rubric.profile):
        for item_id, test, examples in _graded_tests(rubric):
            if stratified_only and not hasattr(test, ATTRIBUTE):
                continue
            mine = found.setdefault(item_id, ItemCoverage(item_id))
            required = set(mine.required)
            for case in explicit(test):
                required |= dimensions(case)
            arguments = drawn(test, run_seed, examples)
            for example in arguments:
                mine.counts.update(dimensions(example))
            found[item_id] = ItemCoverage(
                item_id, mine.examples + len(arguments), mine.counts, frozenset(required)
            )
    return [found[item.id] for item in rubric.items if item.id in found]
