"""What the micrograd and babygrad program generators share.

Why it exists: both assignments' programs are written the same way (a ``_Program`` that names
nodes and keeps their values, numbers drawn and spelled alike) and drawn the same way (program
``i`` from its own seeded ``random.Random``); each assignment's families live in their own
module.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Self

_LETTERS = "abcdefghjkmnpqrstuvwxyz"  # no i, l, o: loop variable and lookalikes


class _Program:
    """A program being written: its lines and the value of every named node."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.lines: list[str] = []
        self.values: dict[str, Any] = {}
        self.used: set[str] = set()
        """Nodes some later node takes as an operand."""

    def fresh(self) -> str:
        n = len(self.values)
        return _LETTERS[n] if n < len(_LETTERS) else f"v{n}"

    def let(self, expr: str, value: Any, name: str | None = None) -> str:
        name = name or self.fresh()
        self.lines.append(f"{name} = {expr}")
        self.values[name] = value
        return name

    def show(self, names: list[str] | None = None) -> None:
        names = list(self.values) if names is None else names
        self.lines.append("show(" + ", ".join(f"{n}={n}" for n in names) + ")")

    def backward(self, out: str) -> None:
        self.lines.append(f"{out}.backward()")

    def finish(self, out: str) -> list[str]:
        """How most programs end: backward from ``out``, show every node; the lines."""
        self.backward(out)
        self.show()
        return self.lines

    def grow(self, step: Callable[[Self], str | None], steps: int) -> None:
        """``steps`` more nodes, each made by ``step`` (None where it made none), in at most
        20 times as many tries."""
        made = 0
        for _ in range(steps * 20):
            if made == steps:
                break
            if step(self) is not None:
                made += 1

    def pick(self, besides: str | None = None) -> str:
        """An operand: the newest node half the time (long chains), any other else (sharing);
        rarely ``besides`` (the other operand) again."""
        among = list(self.values)
        if besides is not None and len(among) > 1 and self.rng.random() < 0.7:
            among.remove(besides)
        name = among[-1] if self.rng.random() < 0.5 else self.rng.choice(among)
        self.used.add(name)
        return name

    def dangling(self, leaves: int) -> list[str]:
        """The inner nodes nothing uses, but the newest."""
        inner = list(self.values)[leaves:-1]
        return [n for n in inner if n not in self.used]


def _num(rng: random.Random, lo: float = -2.0, hi: float = 2.0, away: float = 0.01) -> float:
    """A number with two decimals in [lo, hi], at least ``away`` from 0 (never exactly 0)."""
    while True:
        x = round(rng.uniform(lo, hi), 2)
        if abs(x) >= max(away, 0.01):
            return x


def _const(rng: random.Random) -> int | float:
    """A plain number for an operator: a small int or a float, never 0."""
    if rng.random() < 0.4:
        return rng.choice([-3, -2, -1, 1, 2, 3, 4])
    return _num(rng, -3.0, 3.0, away=0.1)


def _fmt(k: float) -> str:
    return f"({k!r})" if k < 0 else repr(k)
