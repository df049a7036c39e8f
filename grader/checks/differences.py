"""A course's ``central_difference`` on the grader's own functions, against the central
difference computed here (``grader.language.differences``)."""

from __future__ import annotations

import numpy as np

from grader.checks.session import GradingSession, remembers_verdict
from grader.language.differences import SOURCES, central
from grader.language.verdicts import Tolerance, WrongAnswer, mismatch
from grader.worker.protocol import Probe

ROUNDING = Tolerance(1e-8, 1e-8)
"""Any way of writing the central difference agrees to about 1e-12 at the epsilons drawn; a
one-sided difference, or another epsilon than the one given, is off by 1e-4 or more."""
HALF_STEPS = (1.0, 0.5)
"""The central difference a course's docstring may mean: steps of epsilon either side, over
2 epsilon (MiniTorch's guide), or of epsilon / 2, over epsilon (the Wikipedia article its
docstring links). Both are central; a one-sided difference matches neither."""


@remembers_verdict
def check_central_difference(
    session: GradingSession, curve: str, values: list[float], arg: int, epsilon: float
) -> None:
    """``central_difference(f, *values, arg=arg, epsilon=epsilon)`` (``arg`` left to its
    default when it is 0) is the central difference of ``f`` there."""
    assignment = session.assignment("scalar")
    api = assignment.functions
    default_arg = arg == 0
    keywords = f"epsilon={epsilon!r}" if default_arg else f"arg={arg}, epsilon={epsilon!r}"
    call = f"{api.package}.{api.central_difference}"
    snippet = "\n".join(
        [
            f"import {api.package}",
            f"f = {SOURCES[curve]}",
            f"print({call}(f, {', '.join(map(repr, values))}, {keywords}))",
        ]
    )
    case = {
        "curve": curve,
        "values": values,
        "arg": arg,
        "epsilon": epsilon,
        "default_arg": default_arg,
    }
    got = session.ask(assignment.name, Probe.CENTRAL_DIFFERENCE, case, snippet)
    candidates = [np.asarray(central(curve, values, arg, epsilon * h)) for h in HALF_STEPS]
    wrongs = [mismatch("central_difference", got, each, ROUNDING) for each in candidates]
    if all(wrongs):  # the first says what the course's guide expects
        raise WrongAnswer("failed", "wrong central difference", [wrongs[0]], snippet)
