"""A course's conventions: what its own text says where the mathematics leaves a choice open.

relu's gradient at exactly 0, the direction of a walk's order, what a second ``backward()`` does
to ``.grad``, what a leaf that needs no gradient gets, what an op of one input hands a walk:
each is a convention, right one way in one
course and the other way in another. A check charges one only where the course's profile quotes
the course's own words for it (its docstring, its handout or an official test): an unquoted
convention is read the least demanding way, under which every reading is right or none is
drawn. The check that charges one quotes those words in its feedback, so a student reads their
course's text, never this course's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Rules:
    """One convention key: its rules, the one read where the profile states none (the least
    demanding), and those that charge something (they need the course's words)."""

    rules: tuple[str, ...]
    open: str
    charged: tuple[str, ...]
    meaning: str
    """What the key is about, as feedback names it."""


KEYS: dict[str, Rules] = {
    "kinks": Rules(
        ("zero", "open"),
        "open",
        ("zero",),
        "relu's (and abs's) gradient where the operand is exactly 0",
    ),
    "order": Rules(
        ("root_last", "root_first", "either"),
        "either",
        ("root_last", "root_first"),
        "the direction of the walk's order",
    ),
    "second_backward": Rules(
        ("overwrite", "accumulate", "unspecified"),
        "unspecified",
        ("overwrite", "accumulate"),
        "what a second backward() does to the .grad an earlier one left",
    ),
    "frozen_leaves": Rules(
        ("no_grad", "grad", "unspecified"),
        "unspecified",
        ("no_grad",),
        "what a leaf made with requires_grad=False gets from backward()",
    ),
    "calls": Rules(
        ("once", "unspecified"),
        "unspecified",
        ("once",),
        "how often a walk calls each op's backward",
    ),
    "single_gradient": Rules(
        ("tensor_or_tuple", "unspecified"),
        "unspecified",
        ("tensor_or_tuple",),
        "what the backward of an op of one input returns",
    ),
}
"""Every convention a check may charge. ``kinks: open``: no gradient at exactly 0 is drawn;
``order: either``: an order read either way round is right; ``second_backward:
unspecified``: overwriting and adding are both right; ``frozen_leaves``: ``grad`` and
``unspecified`` draw no such leaf (only ``no_grad`` charges one that gets a gradient);
``calls: unspecified``: a walk may call an op's backward more than once (once per input, or
once per path with that path's share, as MiniTorch 2020's breadth-first queue may), and only
the gradients it leaves and the order it reaches the ops in are judged;
``single_gradient: unspecified``: the grader's ops of one input hand a walk a bare tensor (a
1-tuple where the student's own ops give only those), ``tensor_or_tuple``: every other one of
them a 1-tuple, as the course's own ops return either."""


@dataclass(frozen=True)
class Convention:
    """One convention of an assignment: its rule and, where the course states it, the course's
    own words and where they are."""

    key: str
    rule: str
    quote: str = ""
    source: str = ""

    @property
    def charged(self) -> bool:
        return self.rule in KEYS[self.key].charged

    @property
    def words(self) -> str:
        """The course's words as feedback quotes them (empty where it quotes none)."""
        return quoted({"quote": self.quote, "source": self.source}) if self.quote else ""


def quoted(words: Mapping[str, str]) -> str:
    """A profile's ``quote`` and ``source`` as feedback quotes them."""
    return f'The course\'s own words ({words["source"]}): "{words["quote"]}"'


def stated(raw: dict[str, Any]) -> dict[str, Convention]:
    """Every convention key, as a profile's ``conventions:`` block states it or, where it is
    silent, read the least demanding way."""
    return {
        key: Convention(key, **raw[key]) if key in raw else Convention(key, rules.open)
        for key, rules in KEYS.items()
    }


def unquoted(raw: dict[str, Any]) -> list[str]:
    """The keys of a ``conventions:`` block charged without the course's words: one line each,
    saying why it is refused."""
    return [
        f"{key}: {spec['rule']} is charged, so it needs the course's own words (quote:, and "
        f"source: the docstring, handout or official test they are from); without them leave "
        f"{key} out (read as {KEYS[key].open})"
        for key, spec in raw.items()
        if spec["rule"] in KEYS[key].charged and not (spec.get("quote") and spec.get("source"))
    ]
