"""Oracles: independent ways to get the right answer for a graph.

Each oracle turns a graph (and a gradient for its output) into the value of every node and the
gradient of every leaf. The reference engine, PyTorch in float64 and finite differences over the
grader's own forward evaluator must agree; grading uses whichever are available.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Evaluation:
    """What an oracle (or a student engine) says about a graph."""

    values: tuple[np.ndarray, ...]
    """The forward value of every node, in graph order."""
    grads: tuple[np.ndarray, ...]
    """The gradient of the output with respect to every leaf."""


class OracleUnavailable(Exception):
    """This oracle cannot run here (torch not installed, reference/ absent)."""
