"""Every example the feedback shows for a planted bug replays: run as the student runs it (a
fresh ``python`` in the submission's folder), it prints something else than the reference
prints for it, or fails; or the feedback says why it cannot (the failure depends on state kept
between calls, and no earlier examples of its test made it go wrong again).

Each submission carries a micrograd and a babygrad bug (``PAIRS``) and is graded whole. An
example of the catalogue's bugs replays alone, so their feedback carries no note (it is what it
was before replay); each state bug's items carry one. A state bug is graded drawn afresh, as
``tests/grading/test_blame.py`` grades it: a set of ids goes wrong where a new object takes a freed
one's id, which a replay's batched requests may lay out otherwise than the run they replay.
"""

from __future__ import annotations

import pytest

from grader.grading.options import IN_MEMORY
from grader.grading.reproduce import CAUSES
from tests.helpers.grading import REFERENCE, planted_grade
from tests.helpers.planted import PAIRS, STATE_BUG_ITEMS, STATE_BUGS, Bug, pair_label, plant
from tests.helpers.processes import as_a_student

pytestmark = pytest.mark.slow

CASES = [tuple(b for b in pair if b is not None) for pair in PAIRS] + [(b,) for b in STATE_BUGS]
NOT_PRINTED = {
    (
        "babygrad.backward:grads-tensors-not-requiring-grad",
        "test_backward_walks_the_graph_with_a_ledger",
    )
}
"""A bug and a test whose example fails alike in a fresh worker (so it stands) but does not
print what went wrong: the walk's example prints the gradients of the first leaf and the
root, and the frozen leaf that wrongly got one is neither."""


def noted(failure: dict) -> bool:
    return any(CAUSES in line for line in failure["details"])


@pytest.mark.parametrize("bugs", CASES, ids=[pair_label(c) for c in CASES])
def test_every_example_shown_for_a_planted_bug_replays(tmp_path, bugs: tuple[Bug, ...]):
    submission = plant(tmp_path, *bugs)
    state = set().union(*(STATE_BUG_ITEMS.get(b.item, set()) for b in bugs if b in STATE_BUGS))
    report = planted_grade(submission, bugs, replay=None if state else IN_MEMORY)
    problems, notes = [], set()
    not_printed = {test for bug, test in NOT_PRINTED if bug in {b.label for b in bugs}}
    for item in report.items:
        for failure in item["failures"]:
            where = f"{item['id']} {failure['test']}"
            if noted(failure):
                notes.add(item["id"])
                if "earlier example" not in failure["snippet"]:
                    continue  # the state note: no sequence made it go wrong
            if not failure["snippet"]:
                continue
            replays = as_a_student(failure["snippet"], submission) != as_a_student(
                failure["snippet"], REFERENCE
            )
            if replays == (failure["test"] in not_printed):
                problems.append(
                    f"{where}: its example prints what the reference prints"
                    if not replays
                    else f"{where}: its example replays now: drop it from NOT_PRINTED"
                )
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
