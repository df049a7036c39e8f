"""The examples a grading test draws depend on the seed alone, not on what the process imported.

Hypothesis mixes into its draws constants it reads from every "local" module the process has
imported: any source file outside the standard library and site-packages that is not a test.
Which files those are differs between the places a grade is made. The grader is local in a
checkout or the student release (installed editable), but in site-packages on Gradescope
(``pip install``). The reference is imported where it exists and not in the student release.
An oracle or the picture code is imported halfway through a run that fails. So the same seed
drew different examples on Gradescope than in the instructor's batch, and could shrink to a
different counterexample. A grading run therefore draws with no local constants at all.
"""

from __future__ import annotations

from hypothesis.internal.conjecture import providers
from hypothesis.internal.constants_ast import Constants

_NONE = Constants()


def _no_local_constants() -> Constants:
    return _NONE


def without_local_constants() -> None:
    """Make every later draw in this process ignore the modules it has imported.

    This replaces a private Hypothesis function (Hypothesis is pinned in pyproject.toml, and
    the recordings' key holds its version); if a new version renames it, grading stops with
    this error instead of silently drawing differently in each configuration.
    """
    if not callable(getattr(providers, "_get_local_constants", None)):
        raise RuntimeError(
            "this Hypothesis version has no providers._get_local_constants: "
            "update grader.grading.draws for it"
        )
    providers._get_local_constants = _no_local_constants
    providers.CONSTANTS_CACHE.cache.clear()
