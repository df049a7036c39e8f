"""Every example the feedback shows for a planted bug replays: run as the student runs it (a
fresh ``python`` in the submission's folder), it prints something else than the reference
prints for it, or fails; or the feedback says why it does not: the failure depends on state kept
between calls (and no earlier examples of its test made it go wrong again), or, run alone, the
example prints what the reference prints (what went wrong is not among what it prints).

Each submission carries a micrograd and a babygrad bug (``PAIRS``) and is graded whole. An
example of the catalogue's bugs replays alone, so their feedback carries no state note (it is
what it was before replay), and says it prints alike exactly where it does; each state bug's
items carry one. A state bug is graded drawn afresh, as ``tests/grading/test_blame.py`` grades
it: a set of ids goes wrong where a new object takes a freed one's id, which a replay's batched
requests may lay out otherwise than the run they replay, and which a student's interpreter lays
out otherwise than the grade's fresh one: where a state bug's example says it prints alike, what
a student's ``python`` prints is luck.
"""

from __future__ import annotations

import pytest

from grader.grading.options import IN_MEMORY
from grader.grading.reproduce import CAUSES, PRINTS_ALIKE_NOTE
from tests.helpers.grading import REFERENCE, planted_grade
from tests.helpers.planted import PAIRS, STATE_BUG_ITEMS, STATE_BUGS, Bug, pair_label, plant
from tests.helpers.processes import unexplained

pytestmark = pytest.mark.slow

CASES = [tuple(b for b in pair if b is not None) for pair in PAIRS] + [(b,) for b in STATE_BUGS]


def noted(failure: dict) -> bool:
    return any(CAUSES in line for line in failure["details"])


@pytest.mark.parametrize("bugs", CASES, ids=[pair_label(c) for c in CASES])
def test_every_example_shown_for_a_planted_bug_replays(tmp_path, bugs: tuple[Bug, ...]):
    submission = plant(tmp_path, *bugs)
    state = set().union(*(STATE_BUG_ITEMS.get(b.item, set()) for b in bugs if b in STATE_BUGS))
    report = planted_grade(submission, bugs, replay=None if state else IN_MEMORY)
    problems, notes = [], set()
    for item in report.items:
        for failure in item["failures"]:
            where = f"{item['id']} {failure['test']}"
            if noted(failure):
                notes.add(item["id"])
                if "earlier example" not in failure["snippet"]:
                    continue  # the state note: no sequence made it go wrong
            if not failure["snippet"]:
                continue
            if state and PRINTS_ALIKE_NOTE in failure["details"]:
                continue  # where ids are reused, a student's interpreter may print either
            problem = unexplained(failure["snippet"], failure["details"], submission, REFERENCE)
            if problem:
                problems.append(f"{where}: {problem}")
    if state:
        # The bug's own item meets its state on every draw; the other item of its region only
        # where a new object takes a freed one's id (``tests/grading/test_blame.py``): wherever
        # an item of the region loses, it says why its example may not replay.
        lost = {item["id"] for item in report.items if item["score"] < item["max_score"]}
        own = {bug.item for bug in bugs if bug in STATE_BUGS}
        assert own | (state & lost) <= notes, f"state bug without its note on {state - notes}"
    else:
        assert notes == set(), "an example of a catalogue bug did not replay alone"
    assert not problems, "\n".join(problems)
