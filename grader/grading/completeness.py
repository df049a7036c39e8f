"""Is a grade whole? Every selected rubric item has exactly one result a grading test made.

A grading run that stopped early, a results file read before it was whole, a reply meant for
another run, a report merged from the wrong assignments: each leaves items without a result,
and a total summed over what is left is a zero that nobody reading a gradebook can tell from a
real one. Whatever hands out or writes a grade asks ``unfinished`` first, and makes anything
it finds an error, never a score.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from grader.grading.rubric import Item
from grader.grading.scoring import NEVER_RAN


def unfinished(items: Sequence[Any], selected: Sequence[Item]) -> str:
    """Why ``items`` (results in their JSON form, as reports and the ledger hold them) are not
    one graded result for each of the ``selected`` items, or "" when they are."""
    results = [item for item in items if isinstance(item, Mapping)]
    counts = Counter(result.get("id") for result in results)
    wanted = [item.id for item in selected]
    problems = {
        "no result for": [i for i in wanted if counts[i] == 0],
        "no grading test ran for": [
            r["id"] for r in results if r.get("reason") == NEVER_RAN and r.get("id") in wanted
        ],
        "more than one result for": [i for i in wanted if counts[i] > 1],
        "a result for an item not graded here:": [str(i) for i in counts if i not in set(wanted)],
    }
    if len(results) != len(items):
        problems["results that are not items:"] = [str(len(items) - len(results))]
    return "; ".join(f"{what} {', '.join(ids)}" for what, ids in problems.items() if ids)
