"""``generate``: the differential run's programs, drawn from each assignment's families.

Why it exists apart: the family modules build on ``programs`` (``_Program`` and its helpers),
and this module picks among them, so neither imports the other back.
"""

from __future__ import annotations

import random
from functools import lru_cache

from grader.audit.differential.babygrad_programs import BABYGRAD_FAMILIES, BABYGRAD_HEADER
from grader.audit.differential.micrograd_programs import (
    MICROGRAD_FAMILIES,
    MICROGRAD_HEADER,
)


@lru_cache(maxsize=16)
def _generate(assignment: str, programs: int, seed: int) -> tuple[str, ...]:
    families, header = (
        (MICROGRAD_FAMILIES, MICROGRAD_HEADER)
        if assignment == "micrograd"
        else (BABYGRAD_FAMILIES, BABYGRAD_HEADER)
    )
    out = []
    for i in range(programs):
        rng = random.Random(f"{assignment}/{seed}/{i}")
        family = families[i % len(families)]
        out.append(header + "\n".join(family(rng, i // len(families))) + "\n")
    return tuple(out)


def generate(assignment: str, programs: int = 400, seed: int = 0) -> list[str]:
    """The programs ``differ`` runs: program ``i`` is of family ``i % len(families)``, its
    ``turn`` ``i // len(families)`` (a family takes its forms in turn, so each shows up), and
    is drawn from its own ``random.Random``: a larger ``programs`` extends a smaller one."""
    return list(_generate(assignment, programs, seed))
