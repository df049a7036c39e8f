"""The grader's own mutation run (``tests/self_audit.py``), sampled: a seeded sample of the
mutants of what decides trust and points must each fail a test, unless a person judged it
equivalent. ``make self-audit`` runs them all."""

from __future__ import annotations

import dataclasses

import pytest

from grader.audit.mutants import sample
from tests import self_audit
from tests.self_audit import KILLED, SURVIVED

SIZE, SEED = 20, 0
"""Small enough for ``make test`` (about a minute on one core), spread over the modules and
operators by ``mutants.sample``."""


def test_every_judgement_names_a_mutant_of_the_grader():
    """A judgement whose mutant is gone (its code changed) is checked again, or removed."""
    judged = self_audit.judged()
    modules = {k.split(" ", 1)[0] for k in judged}
    targets = [t for t in self_audit.TARGETS if t.module in modules]
    keys = {self_audit.key(m) for m in self_audit.all_mutants(targets)}
    assert sorted(set(judged) - keys) == []


@pytest.mark.slow
def test_the_runner_tells_a_killed_mutant_from_a_survivor():
    """The same mutant, killed by the tests of its module and surviving tests that never
    import it: the run in the copy uses the mutated module, and a survivor is seen."""
    target = next(t for t in self_audit.TARGETS if t.name == "grading/completeness")
    mutant = next(  # ``counts[i] == 0`` -> ``counts[i] != 0``: whole grades are unfinished
        m for m in target.mutants() if m.operator == "compare-eq-to-ne"
    )
    elsewhere = dataclasses.replace(target, tests=("tests/test_layout.py",))  # reads, imports none
    with self_audit.testers(1) as available:
        tester = available.get()
        assert tester.run(target, mutant).outcome == KILLED
        assert tester.run(elsewhere, mutant).outcome == SURVIVED
        assert tester.run(target).outcome == SURVIVED


def test_the_pending_modules_are_modules_of_the_run():
    assert self_audit.PENDING.issubset(t.name for t in self_audit.TARGETS)


@pytest.mark.slow
def test_a_sample_of_the_graders_mutants_is_killed_or_judged_equivalent():
    """Each mutant of the sample (of the modules done, ``PENDING`` left out) fails a test of
    its module, or is judged equivalent. No baseline run: those tests pass unmutated in this
    very run of the suite, and in a copy (the test above)."""
    done = [t for t in self_audit.TARGETS if t.name not in self_audit.PENDING]
    judged = self_audit.judged()
    chosen = [
        m
        for m in sample(self_audit.all_mutants(done), SIZE, SEED)
        if self_audit.key(m) not in judged
    ]
    runs = self_audit.run_all(chosen)
    survivors = [self_audit.explain(m) for m in chosen if runs[m.id].outcome == SURVIVED]
    assert not survivors, "a mutant of the grader no test kills:\n" + "\n".join(survivors)
