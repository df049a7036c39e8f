"""No reset of the global random generators around each example: no grading test reads them.

Around every call of a test body, Hypothesis saves the state of Python's and numpy's global
random generators, seeds them, and puts the saved state back afterwards
(``hypothesis.internal.entropy.deterministic_PRNG``), so that a test reading them repeats.
No grading test reads them: its examples come from Hypothesis's own generator, seeded per test
(``grader.grading.plugin.draw_settings``), and its oracles are deterministic. A replayed run
(``grader.grading.replay``) calls the same bodies with no reset at all, and grades as a run
that draws (``tests/grading/test_replay.py``, ``tests/grading/test_blame.py``). The reset cost
0.12 ms an example, numpy's state most of it: about a tenth of a grade that draws every example.
"""

from __future__ import annotations

import contextlib

import hypothesis.core


def without_prng_resets() -> None:
    """Make every later example in this process run without the reset.

    This replaces a private Hypothesis function (Hypothesis is pinned in pyproject.toml, as for
    ``grader.grading.draws``); if a new version renames it, grading stops with this error
    instead of paying for the reset unnoticed.
    """
    if not callable(getattr(hypothesis.core, "deterministic_PRNG", None)):
        raise RuntimeError(
            "this Hypothesis version has no core.deterministic_PRNG: "
            "update grader.grading.prng for it"
        )
    hypothesis.core.deterministic_PRNG = contextlib.nullcontext
