"""The wide differential run that triages the audit's surviving mutants
(``grader.audit.differential``): it finds nothing between the reference and a copy of it,
finds hand-made mutants with a program that shows them when run on its own, turns a hang into
"timed out", and is deterministic for a seed."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from grader.audit.differential import Outcome, differ, generate, same, same_text
from grader.audit.differential import runner as differential
from grader.layout import DEFAULT_REFERENCE


def copy_reference(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(DEFAULT_REFERENCE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def mutant(tmp_path: Path, name: str, path: str, old: str, new: str) -> Path:
    """A copy of the reference with the first ``old`` in ``path`` replaced by ``new``."""
    folder = copy_reference(tmp_path, name)
    text = (folder / path).read_text()
    assert old in text, f"{old!r} is not in {path}"
    (folder / path).write_text(text.replace(old, new, 1))
    return folder


def run_alone(program: str, engine: Path) -> tuple[str, int, str]:
    """stdout, exit code and the exception's type of ``program`` run on its own on ``engine``."""
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=engine,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin"},
    )
    last = done.stderr.strip().splitlines()[-1:] or [""]
    return done.stdout, done.returncode, last[0].split(":")[0]


# ------------------------------------------------------------------------- without engines


@pytest.mark.parametrize("assignment", ["micrograd", "babygrad"])
def test_programs_are_deterministic_compile_and_extend(assignment):
    programs = generate(assignment, 60, seed=3)
    assert programs == generate(assignment, 60, seed=3)
    assert programs != generate(assignment, 60, seed=4)
    assert generate(assignment, 30, seed=3) == programs[:30]
    for program in programs:
        compile(program, "<program>", "exec")


def test_babygrad_programs_call_every_op_every_way():
    text = "\n".join(generate("babygrad"))
    ops_source = (DEFAULT_REFERENCE / "babygrad" / "ops.py").read_text()
    functions = re.findall(r"^def ([a-z]\w*)\(", ops_source, re.MULTILINE)
    classes = re.findall(r"^class (\w+)\(Function\)", ops_source, re.MULTILINE)
    assert len(functions) > 20 and len(classes) > 20
    for name in functions + classes:
        assert f"ops.{name}(" in text, name
    for method in [
        ".matmul(",
        ".reshape(",
        ".transpose()",
        ".transpose((",
        ".sum()",
        ".sum((",
        ".sum(-",
        ".broadcast_to(",
        ".log()",
        ".exp()",
        ".sqrt()",
        ".abs()",
        ".relu()",
        ".sigmoid()",
        ".tanh()",
        "op.backward(up, ",
        "._op.backward(up, ",
        ".backward(up)",
        ".backward()",
        "requires_grad=False, dtype='float32'",
        "dtype='float64'",
    ]:
        assert method in text, method
    for pattern in [
        r"= \w+ [-+*/@] \w+\n",
        r"= \w+ \*\* \w+\n",
        r"= -\w+\n",
        r"= \w+ [-+*/] \(?-?[\d.]+\)?\n",
        r"= \(?-?[\d.]+\)? [-+*/] \w+\n",
        r"= \w+ \*\* \(?-?[\d.]+\)?\n",
        r"= 2 \*\* \w+\n",
        r"= \w+ [-+*/] np\.float(32|64)\(",
        r"= np\.array\(.*\) [-+*/] \w+\n",
        r"= \w+ [-+*/] \[",
        r"= \w+ [-+*/] np\.array\(",
    ]:
        assert re.search(pattern, text), pattern
    upstream = re.findall(r"^up2? = Tensor\((.*), requires_grad=False", text, re.MULTILINE)
    assert len(upstream) > 100
    for literal in upstream:  # random, never all ones
        assert set(np.ravel(ast.literal_eval(literal)).tolist()) != {1.0}, literal


def test_micrograd_programs_cover_every_form():
    text = "\n".join(generate("micrograd"))
    for op in "+-*/":
        o = re.escape(op)
        assert re.search(rf"= [a-z] {o} \(?-?[\d.]+\)?\n", text), f"a {op} number"
        assert re.search(rf"= \(?-?[\d.]+\)? {o} [a-z]\n", text), f"number {op} a"
        assert re.search(rf"= [a-z] {o} [a-z]\n", text), f"a {op} b"
    for pattern in [
        r"\*\* \(-\d\)",
        r"\*\* \(-\d\.\d+\)",
        r"\*\* 0\.5",
        r"\*\* 0\n",
        r"= -[a-z]\n",
        r"\.tanh\(\)",
        r"\.exp\(\)",
        r"\.relu\(\)",
        "Value\\(0\\.0\\)",
        r"[a-z] \* [a-z] \* [a-z]",
        r"zero_grad\(",
        r"build_topo\(",
        r"\._backward\(\)",
        r"\.grad = ",
        r"range\(\d{3}\)",
        r"_prev",
    ]:
        assert re.search(pattern, text), pattern
    assert any(p.count(".backward()") >= 2 and "zero_grad(" not in p for p in generate("micrograd"))


def test_numbers_compare_within_tolerance_and_exceptions_by_type():
    assert same_text("a 1.0 [2.0, -3.5e-05]", "a 1.0000000001 [2.0, -3.5e-05]", 1e-9, 1e-12)
    assert not same_text("a 1.0", "a 1.01", 1e-9, 1e-12)
    assert same_text("b 0 None", "b 0.0 None", 1e-9, 1e-12)
    assert not same_text("b 0.0 None", "b 0.0 (2,)", 1e-9, 1e-12)
    assert same_text("v12 nan inf", "v12 nan inf", 1e-5, 1e-6)
    assert not same_text("x inf", "x -inf", 1e-5, 1e-6)
    assert same(Outcome("1\n", "TypeError: one"), Outcome("1\n", "TypeError: two"), 0, 0)
    assert not same(Outcome("", "TypeError: x"), Outcome("", "ValueError: x"), 0, 0)
    assert not same(Outcome("", None), Outcome("", "timed out"), 0, 0)
    assert Outcome("", "timed out").render() == "timed out"
    assert Outcome("a 1\n", "ValueError: no").render() == "a 1\nraised ValueError: no"


# ---------------------------------------------------------------------------- with engines


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ["micrograd", "babygrad"])
def test_the_reference_does_not_differ_from_a_copy(tmp_path, assignment):
    assert differ(DEFAULT_REFERENCE, copy_reference(tmp_path, "copy"), assignment) is None


MUTANTS = {
    "add-overwrites": (
        "micrograd",
        "micrograd/engine.py",
        "            self.grad += out.grad\n",
        "            self.grad = out.grad\n",
    ),
    "tanh-1-t": ("micrograd", "micrograd/engine.py", "1.0 - t * t", "1.0 - t"),
    "rsub-flipped": (
        "micrograd",
        "micrograd/engine.py",
        "return other + (-self)",
        "return self + (-other)",
    ),
    "summation-backward": (
        "babygrad",
        "babygrad/ops.py",
        "np.broadcast_to(np.reshape(out_grad.data, kept), a.shape)",
        "np.broadcast_to(out_grad.data, a.shape)",
    ),
    "grad-without-requires-grad": (
        "babygrad",
        "babygrad/tensor.py",
        "            if node.requires_grad:\n                node.grad",
        "            node.grad",
    ),
    "mul-grad-from-self": (
        "babygrad",
        "babygrad/ops.py",
        "_grad(unbroadcast(g * b.data, a.shape), a),",
        "_grad(unbroadcast(g * a.data, a.shape), a),",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MUTANTS))
def test_a_mutant_is_shown_by_a_program_that_runs_on_its_own(tmp_path, name):
    assignment, path, old, new = MUTANTS[name]
    candidate = mutant(tmp_path, name, path, old, new)
    found = differ(DEFAULT_REFERENCE, candidate, assignment)
    assert found is not None
    assert found.expected != found.got
    assert found.program.startswith(
        "from micrograd.engine import" if assignment == "micrograd" else "import numpy as np"
    )
    assert run_alone(found.program, candidate) != run_alone(found.program, DEFAULT_REFERENCE)


@pytest.mark.slow
def test_the_shortest_differing_program_is_shown(tmp_path):
    """The shortest of those the reference runs without raising: ``a / b`` computed as
    ``a * b**1`` differs in ``a / 0`` too, where the reference raises ZeroDivisionError."""
    candidate = mutant(
        tmp_path, "div", "micrograd/engine.py", "return self * other**-1", "return self * other**1"
    )
    found = differ(DEFAULT_REFERENCE, candidate, "micrograd")
    assert found is not None
    expected = differential.run_all(DEFAULT_REFERENCE, "micrograd", generate("micrograd"))
    got = differential.run_all(candidate, "micrograd", generate("micrograd"))
    differing = [
        (expected[i].raised is not None, p.count("\n"), i)
        for i, p in enumerate(generate("micrograd"))
        if not same(expected[i], got[i], *differential.TOLERANCE["micrograd"])
    ]
    assert found.program == generate("micrograd")[min(differing)[2]]
    assert "raised" not in found.expected and any(raised for raised, _, _ in differing)


@pytest.mark.slow
def test_a_mutant_that_loops_forever_times_out(tmp_path):
    candidate = mutant(
        tmp_path,
        "loop",
        "micrograd/engine.py",
        '        out = Value(math.exp(self.data), (self,), "exp")\n',
        "        while True:\n            pass\n",
    )
    started = time.monotonic()
    found = differ(DEFAULT_REFERENCE, candidate, "micrograd", timeout=600.0)
    assert found is not None and found.got == "timed out"
    assert ".exp()" in found.program
    # ended by the program's CPU limit (1 s), not by the run's 600 s wall-clock timeout: a
    # bound between the two that no load reaches
    assert time.monotonic() - started < 300


@pytest.mark.slow
def test_a_run_that_outlives_the_wall_timeout_is_stopped(tmp_path):
    candidate = mutant(
        tmp_path,
        "sleep",
        "babygrad/ops.py",
        "        return np.tanh(a)\n",
        "        __import__('time').sleep(3600)\n",
    )
    started = time.monotonic()
    found = differ(DEFAULT_REFERENCE, candidate, "babygrad", programs=60, timeout=4.0)
    assert found is not None and found.got == "timed out"
    assert "tanh" in found.program.lower()
    assert time.monotonic() - started < 30


@pytest.mark.slow
def test_results_are_deterministic_and_the_reference_runs_once(tmp_path, monkeypatch):
    candidate = mutant(
        tmp_path,
        "div",
        "babygrad/ops.py",
        "-g * a.data / (b.data * b.data)",
        "-g * a.data / b.data",
    )
    runs = []
    run_all = differential.run_all
    monkeypatch.setattr(
        differential, "run_all", lambda *args, **kw: runs.append(args[0]) or run_all(*args, **kw)
    )
    first = differ(DEFAULT_REFERENCE, candidate, "babygrad", programs=200, seed=7)
    again = differ(DEFAULT_REFERENCE, candidate, "babygrad", programs=200, seed=7)
    assert first is not None and first == again
    assert len(runs) <= 1  # none if another test here ran the same reference already
    differential._cache.clear()
    assert differ(DEFAULT_REFERENCE, candidate, "babygrad", programs=200, seed=7) == first
