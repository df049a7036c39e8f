"""The baseline ``make bench`` holds a grade against: a two-test PyTorch check of an engine.

It is what a student does by hand before there is a grader: two pytest tests, one a scalar
expression with ``Value``, one a tensor expression with ``Tensor``, each computed again with
PyTorch and the gradients compared. A grade is worth its wait where it costs less than that
check (the target: a passing grade that replays its examples within 0.4 times its wall
time). Run as a student runs it, ``python -m pytest`` in a folder of its own, in the
environment the grader is installed in (pytest loads the plugins installed there); the engine
is found on ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from grader.oracles import torch_oracle

TESTS = """\
import numpy as np
import torch

from babygrad.tensor import Tensor
from micrograd.engine import Value


def expression(a, b):
    c = a + b
    d = a * b + b**3
    return (c - d).tanh() + (d * 2).relu() + (-a).exp() / b


def test_values_match_pytorch():
    a, b = Value(-1.5), Value(0.5)
    expression(a, b).backward()
    ta = torch.tensor(-1.5, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    expression(ta, tb).backward()
    assert abs(a.grad - ta.grad.item()) < 1e-6
    assert abs(b.grad - tb.grad.item()) < 1e-6


def test_tensors_match_pytorch():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    a, b = Tensor(x, dtype="float64"), Tensor(w, dtype="float64")
    ((a @ b).relu() * 2 + (a @ b).exp()).sum().backward()
    ta, tb = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ((ta @ tb).relu() * 2 + (ta @ tb).exp()).sum().backward()
    assert np.allclose(a.grad.numpy(), ta.grad.numpy())
    assert np.allclose(b.grad.numpy(), tb.grad.numpy())
"""


def pytorch_check(engine: Path, work: Path) -> Callable[[], None] | None:
    """Run the two tests on ``engine`` (a folder with ``micrograd`` and ``babygrad``), failing
    loudly if they do not pass; None where PyTorch is not installed."""
    if not torch_oracle.available():
        return None
    folder = work / "pytorch-check"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_against_pytorch.py").write_text(TESTS)
    env = {**os.environ, "PYTHONPATH": str(engine)}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]

    def run() -> None:
        subprocess.run(command, cwd=folder, env=env, check=True, stdout=subprocess.DEVNULL)

    return run
