"""A wide differential run of an engine against the reference, to triage surviving mutants.

``differ(reference, candidate, assignment)`` writes hundreds of random, straight-line programs
in the course's own API (deterministic from ``seed``), runs all of them through each engine in
one subprocess per engine, and compares what each program printed, program by program: every
number with a tight tolerance, everything else exactly, an exception by its type. It returns
the shortest program (fewest lines) whose outcome differs, with both outcomes, or ``None``;
programs the reference runs without raising come first (an edge case where the reference
raises shows a hole less plainly).

The programs are much wider than the grading tests: every operator with Values, Tensors and
plain numbers on either side, every op as an operator, a method, a function and a ``Function``
object, tensors that do not require grad beside ones that do, implicit broadcasting, random
(never all-ones) upstream gradients, closures and ``Function.backward`` called alone,
``backward()`` twice, ``zero_grad``, ``build_topo``, the kinks of relu and abs, and deep
chains. Each prints every node's value and gradient.

Only what the course's API promises is compared, so a mutant that differs elsewhere is listed
as probably equivalent, for a person to confirm: values and gradients (not their dtypes: a
float64 gradient for float32 data is correct), shapes, ``requires_grad``, which operands a
node has (not their order), ``build_topo``'s exact order only where a single order is valid
(elsewhere: its length, that it holds each node once, operands first, the root last), and
``matmul`` on operands of 2 or more dimensions only (as its docstring says).

The candidate runs its programs shortest first and stops at the first difference, so a
mutant that differs costs little more than starting Python. A program that spends more than
``PROGRAM_CPU_S`` of CPU time "timed out" (a CPU timer inside the run); a run that outlives
``timeout`` seconds of wall time is killed and the program in flight "timed out". The
reference's outcomes are cached in the process, since the audit triages many mutants against
one reference.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import re
import resource
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, suppress
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

ASSIGNMENTS = ("micrograd", "babygrad")
PROGRAM_CPU_S = 1.0
"""CPU seconds one program may take before it "timed out" (the reference's take at most
40 ms)."""
MEMORY_MB = 1024
"""The address-space limit of each run (numpy and OpenBLAS need a few hundred MB)."""
TOLERANCE = {"micrograd": (1e-9, 1e-12), "babygrad": (1e-5, 1e-6)}
"""(rtol, atol) for every number printed: float64 scalars; float32 tensors."""
TIMED_OUT = "timed out"


@dataclass(frozen=True)
class Difference:
    program: str
    """A runnable program in the course's API (imports included) that prints what it compares."""
    expected: str
    """What the reference printed, then ``raised Type: message`` if it raised."""
    got: str
    """What the candidate printed (and raised), or ``timed out``."""


@dataclass(frozen=True)
class Outcome:
    stdout: str
    raised: str | None = None
    """``Type: message``, ``timed out``, ``crashed (exit code N)``, or None."""

    def render(self) -> str:
        if self.raised == TIMED_OUT:
            return TIMED_OUT
        text = self.stdout.rstrip("\n")
        if self.raised is not None:
            text += ("\n" if text else "") + f"raised {self.raised}"
        return text


# ------------------------------------------------------------------------------------ differ


def differ(reference: Path, candidate: Path, assignment: str, *, programs: int = 400,
           seed: int = 0, timeout: float = 60.0) -> Difference | None:
    """The shortest of ``programs`` random programs whose outcome on ``candidate`` differs from
    the one on ``reference`` (first by index among equally short ones; one the reference runs
    without raising if there is any), or None."""
    if assignment not in ASSIGNMENTS:
        raise ValueError(f"unknown assignment {assignment!r}; expected one of {ASSIGNMENTS}")
    if not (Path(reference) / assignment).is_dir():
        raise ValueError(f"{reference} has no {assignment}/ package")
    sources = generate(assignment, programs, seed)
    expected = _reference_outcomes(Path(reference), assignment, programs, seed, timeout)
    rtol, atol = TOLERANCE[assignment]
    order = sorted(_order(sources), key=lambda i: expected[i].raised is not None)  # stable
    with closing(_stream(Path(candidate), assignment, sources, order, timeout)) as run:
        for index, got in run:
            if not same(expected[index], got, rtol, atol):
                return Difference(sources[index], expected[index].render(), got.render())
    return None


def same(expected: Outcome, got: Outcome, rtol: float, atol: float) -> bool:
    """Same printed text with every number within tolerance, and the same exception type."""
    kind = (expected.raised or "").split(":")[0], (got.raised or "").split(":")[0]
    return kind[0] == kind[1] and same_text(expected.stdout, got.stdout, rtol, atol)


_NUMBER = re.compile(
    r"(?<![\w.])([-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|nan))(?![\w.])")


def same_text(expected: str, got: str, rtol: float, atol: float) -> bool:
    a, b = _NUMBER.split(expected), _NUMBER.split(got)
    if len(a) != len(b) or a[0::2] != b[0::2]:
        return False
    return all(_close(float(x), float(y), rtol, atol) for x, y in zip(a[1::2], b[1::2],
                                                                     strict=True))


def _close(x: float, y: float, rtol: float, atol: float) -> bool:
    if x == y or (math.isnan(x) and math.isnan(y)):
        return True
    if not (math.isfinite(x) and math.isfinite(y)):
        return False
    return abs(x - y) <= max(atol, rtol * max(abs(x), abs(y)))


def _order(sources: list[str]) -> list[int]:
    """Shortest first, then by index: the first difference met is the one to show."""
    return sorted(range(len(sources)), key=lambda i: (sources[i].count("\n"), i))


_cache: dict[tuple[str, str, int, int], dict[int, Outcome]] = {}
_cache_lock = threading.Lock()
_key_locks: dict[tuple[str, str, int, int], threading.Lock] = {}


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and
                       "__pycache__" not in p.parts):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _reference_outcomes(reference: Path, assignment: str, programs: int, seed: int,
                        timeout: float) -> dict[int, Outcome]:
    key = (_digest(reference / assignment), assignment, programs, seed)
    with _cache_lock:
        if key in _cache:
            return _cache[key]
        lock = _key_locks.setdefault(key, threading.Lock())
    with lock:  # one run per reference, however many threads ask at once
        if key not in _cache:
            sources = generate(assignment, programs, seed)
            _cache[key] = run_all(reference, assignment, sources, timeout)
        return _cache[key]


def run_all(engine: Path, assignment: str, sources: list[str],
            timeout: float = 60.0) -> dict[int, Outcome]:
    """Every program's outcome on ``engine``; a run that hangs is started again after the
    program that hung (recorded as timed out)."""
    outcomes: dict[int, Outcome] = {}
    pending = _order(sources)
    while pending:
        with closing(_stream(engine, assignment, sources, pending, timeout)) as run:
            for index, outcome in run:
                outcomes[index] = outcome
        pending = [i for i in pending if i not in outcomes]
    return outcomes


# ------------------------------------------------------------------------------ the driver

_DRIVER = r"""
import io, json, os, signal, sys
from contextlib import redirect_stdout
sys.path.insert(0, sys.argv[1])
limit = float(sys.argv[2])
programs = json.load(sys.stdin)
if sys.argv[3]:
    __import__(sys.argv[3])
report = os.fdopen(os.dup(1), "w")
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)

class TimedOut(BaseException):
    pass

def expire(signum, frame):
    raise TimedOut()

signal.signal(signal.SIGPROF, expire)
report.write("ready\n")
report.flush()
for index, source in programs:
    buffer = io.StringIO()
    try:
        try:
            signal.setitimer(signal.ITIMER_PROF, limit)
            with redirect_stdout(buffer):
                exec(compile(source, "<program %d>" % index, "exec"), {"__name__": "__main__"})
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        raised = None
    except TimedOut:
        raised = "timed out"
    except BaseException as error:
        try:
            message = str(error)
        except BaseException:
            message = "?"
        raised = type(error).__name__ + ": " + message
    report.write(json.dumps([index, buffer.getvalue()[:1000000], raised]) + "\n")
    report.flush()
"""


def _confine() -> None:
    """The child's ``preexec_fn``: an address-space limit, and no core files."""
    limit = MEMORY_MB * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _environment() -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"}
    env.update({name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                       "MKL_NUM_THREADS")})
    return env


def _stream(engine: Path, assignment: str, sources: list[str], indices: list[int],
            timeout: float) -> Iterator[tuple[int, Outcome]]:
    """Run ``sources[i]`` for ``i`` in ``indices``, in that order, in one subprocess, yielding
    each outcome as it arrives. If the run outlives ``timeout`` (wall) or dies, the program in
    flight is yielded as timed out (or crashed) and the stream ends there."""
    preload = "numpy" if assignment == "babygrad" else ""
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stderr:
        stdin.write(json.dumps([[i, sources[i]] for i in indices]).encode())
        stdin.seek(0)
        process = subprocess.Popen(
            [sys.executable, "-I", "-c", _DRIVER, str(Path(engine).resolve()),
             repr(min(timeout, PROGRAM_CPU_S)), preload],
            stdin=stdin, stdout=subprocess.PIPE, stderr=stderr, cwd=engine,
            env=_environment(), preexec_fn=_confine, start_new_session=True)
        deadline = time.monotonic() + timeout
        pending = list(indices)
        ready = expired = False
        try:
            assert process.stdout is not None
            for line in _lines(process.stdout, deadline):
                if line is None:
                    expired = True
                elif not ready:
                    ready = line == "ready"
                else:
                    index, stdout, raised = json.loads(line)
                    pending.remove(index)
                    yield index, Outcome(stdout, raised)
            if not pending:
                return
            _kill(process)
            if not ready:
                stderr.seek(0)
                tail = stderr.read().decode(errors="replace")[-2000:]
                why = f"did not start within {timeout} s" if expired else "failed"
                raise RuntimeError(f"the differential driver {why} on {engine}:\n{tail}")
            if expired:
                yield pending[0], Outcome("", TIMED_OUT)
            else:
                yield pending[0], Outcome("", f"crashed (exit code {process.returncode})")
        finally:
            _kill(process)
            process.stdout.close()  # type: ignore[union-attr]


def _lines(pipe: Any, deadline: float) -> Iterator[str | None]:
    """The lines a pipe delivers until it closes, or until ``deadline`` (monotonic) passes:
    then a last None."""
    fd = pipe.fileno()
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while (remaining := deadline - time.monotonic()) > 0:
            if not selector.select(remaining):
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                yield line.decode()
    yield None


def _kill(process: subprocess.Popen) -> None:
    if process.poll() is None:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    process.wait()


# -------------------------------------------------------------------------- the programs

MICROGRAD_HEADER = """from micrograd.engine import Value, build_topo, zero_grad


def show(**nodes):
    for name, v in nodes.items():
        print(name, v.data, v.grad)

"""
BABYGRAD_HEADER = """import numpy as np
from babygrad import Tensor, ops


def show(**tensors):
    for name, t in tensors.items():
        g = t.grad.data if isinstance(t.grad, Tensor) else t.grad
        grad = None if g is None else (np.shape(g), np.asarray(g).tolist())
        print(name, t.requires_grad, t.shape, t.data.tolist(), "grad", grad)


def show_parts(parts):
    for p in parts if isinstance(parts, (tuple, list)) else (parts,):
        d = p.data if isinstance(p, Tensor) else p
        print("part", np.shape(d), np.asarray(d).tolist())

"""


@lru_cache(maxsize=16)
def _generate(assignment: str, programs: int, seed: int) -> tuple[str, ...]:
    families, header = ((MICROGRAD_FAMILIES, MICROGRAD_HEADER) if assignment == "micrograd"
                        else (BABYGRAD_FAMILIES, BABYGRAD_HEADER))
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


# ------------------------------------------------------------------------------- micrograd

_MG_NUMBER_FORMS: list[tuple[str, Callable[[float, float], float], str]] = [
    ("{x} + {k}", lambda x, k: x + k, ""),
    ("{k} + {x}", lambda x, k: k + x, ""),
    ("{x} - {k}", lambda x, k: x - k, ""),
    ("{k} - {x}", lambda x, k: k - x, ""),
    ("{x} * {k}", lambda x, k: x * k, ""),
    ("{k} * {x}", lambda x, k: k * x, ""),
    ("{x} / {k}", lambda x, k: x / k, ""),
    ("{k} / {x}", lambda x, k: k / x, "x"),
]
_MG_UNARY: dict[str, tuple[str, Callable[[float], float]]] = {
    "tanh": ("{x}.tanh()", math.tanh),
    "exp": ("{x}.exp()", math.exp),
    "relu": ("{x}.relu()", lambda x: max(x, 0.0)),
    "neg": ("-{x}", lambda x: -x),
}
_INT_POWERS = [-3, -2, -1, 0, 1, 2, 3, 4]
_FLOAT_POWERS = [0.5, -0.5, 1.5, -1.5, 2.0, 2.5, 0.25, -1.0, 3.0]


def _mg_value(x: float) -> str:
    return f"Value({x!r})"


def _mg_leaves(p: _Program, count: int, away: float = 0.0) -> list[str]:
    out = []
    for _ in range(count):
        x = _num(p.rng, -2.5, 2.5, away=max(away, 0.05))
        if p.rng.random() < 0.15:
            x = int(round(x)) or 1
        out.append(p.let(_mg_value(x), float(x)))
    return out


def _mg_unary_ok(op: str, x: float) -> bool:
    return (op != "relu" or abs(x) >= 0.05) and (op != "exp" or x <= 4)


def _mg_power(p: _Program, x: str) -> tuple[str, float] | None:
    vx = p.values[x]
    if p.rng.random() < 0.5:
        k: float = p.rng.choice(_INT_POWERS)
        if (k <= 0 and abs(vx) < 0.3) or (k == 0 and vx == 0):
            return None
    else:
        k = p.rng.choice(_FLOAT_POWERS)
        if vx < 0.2:
            return None
    return f"{x} ** {_fmt(k)}", vx**k


def _mg_step(p: _Program) -> str | None:
    """One random node on the nodes so far, or None if it would leave the ops' domains."""
    rng = p.rng
    x = p.pick()
    vx = p.values[x]
    kind = rng.choice(["vv", "vv", "number", "unary", "unary", "pow"])
    if kind == "vv":
        y = p.pick(besides=x)
        vy = p.values[y]
        op = rng.choice("+-*/")
        if op == "/" and abs(vy) < 0.3:
            return None
        expr, value = f"{x} {op} {y}", {"+": vx + vy, "-": vx - vy, "*": vx * vy,
                                         "/": vx / vy if vy else 0.0}[op]
    elif kind == "number":
        template, fn, guard = rng.choice(_MG_NUMBER_FORMS)
        k = _const(rng)
        if guard and abs(vx) < 0.3:
            return None
        expr, value = template.format(x=x, k=_fmt(k)), fn(vx, k)
    elif kind == "unary":
        op = rng.choice(list(_MG_UNARY))
        if not _mg_unary_ok(op, vx):
            return None
        template, fn = _MG_UNARY[op]
        expr, value = template.format(x=x), fn(vx)
    else:
        made = _mg_power(p, x)
        if made is None:
            return None
        expr, value = made
    if isinstance(value, complex) or not math.isfinite(value) or abs(value) > 1e3:
        return None
    return p.let(expr, value)


def _mg_dag(p: _Program, leaves: int, steps: int) -> str:
    _mg_leaves(p, leaves)
    made = 0
    for _ in range(steps * 20):
        if made == steps:
            break
        if _mg_step(p) is not None:
            made += 1
    return list(p.values)[-1]


def mg_number(rng: random.Random, turn: int) -> list[str]:
    """A plain number on either side of + - * /, one or two ops."""
    p = _Program(rng)
    (x,) = _mg_leaves(p, 1, away=0.3)
    for step in range(rng.choice([1, 1, 2])):
        template, fn, guard = (_MG_NUMBER_FORMS[turn % len(_MG_NUMBER_FORMS)] if step == 0
                               else rng.choice(_MG_NUMBER_FORMS))
        k = _const(rng)
        if guard and abs(p.values[x]) < 0.3:
            continue
        x = p.let(template.format(x=x, k=_fmt(k)), fn(p.values[x], k))
    if len(p.values) == 1:
        x = p.let(f"{x} * 2", p.values[x] * 2)
    p.lines.append(f"{x}.backward()")
    p.show()
    return p.lines


def mg_values(rng: random.Random, turn: int) -> list[str]:
    """Two Values under + - * /, and the same op with the plain number on each side."""
    p = _Program(rng)
    a, b = _mg_leaves(p, 2, away=0.3)
    op = "+-*/"[turn % 4]
    out = p.let(f"{a} {op} {b}", 0.0)
    k = _const(rng)
    right = p.let(f"{a} {op} {_fmt(k)}", 0.0)
    left = p.let(f"{_fmt(k)} {op} {b}", 0.0)
    for node in (out, right, left):
        p.lines.append(f"{node}.backward()")
    p.show()
    return p.lines


def mg_power(rng: random.Random, turn: int) -> list[str]:
    """Int exponents (negative, 0, 1) on any base; float ones (negative, fractional) on > 0."""
    p = _Program(rng)
    powers = _INT_POWERS + _FLOAT_POWERS
    k = powers[turn % len(powers)]
    value = (_num(rng, 0.2, 3.0) if isinstance(k, float) or rng.random() < 0.5
             else _num(rng, -3.0, 3.0, away=0.3))
    x = p.let(_mg_value(value), value)
    y = p.let(f"{x} ** {_fmt(k)}", value**k)
    if rng.random() < 0.4:
        y = p.let(f"{y} * {x}", 0.0)
    if rng.random() < 0.5:
        p.lines.append(f"{y}.grad = {_num(rng, -2, 2, away=0.1)!r}")
        p.lines.append(f"{y}._backward()")
    else:
        p.lines.append(f"{y}.backward()")
    p.show()
    return p.lines


def mg_unary(rng: random.Random, turn: int) -> list[str]:
    """tanh, exp, relu and unary minus, composed, on values on both sides of 0."""
    p = _Program(rng)
    (x,) = _mg_leaves(p, 1, away=0.05)
    for step in range(rng.randint(1, 3)):
        op = list(_MG_UNARY)[turn % len(_MG_UNARY)] if step == 0 else rng.choice(list(_MG_UNARY))
        if not _mg_unary_ok(op, p.values[x]):
            continue
        template, fn = _MG_UNARY[op]
        x = p.let(template.format(x=x), fn(p.values[x]))
    p.lines.append(f"{x}.backward()")
    p.show()
    return p.lines


def mg_kink(rng: random.Random, turn: int) -> list[str]:
    """Exactly 0 into relu (derivative 0 there), tanh, exp, pow and products."""
    p = _Program(rng)
    z = p.let(rng.choice(["Value(0.0)", "Value(0)", "Value(-0.0)"]), 0.0)
    b = p.let(_mg_value(_num(rng, -2, 2, away=0.3)), 0.0)
    forms = [f"{z}.relu()", f"({z} * {b}).relu()", f"({z} - {z}).relu()", f"{z}.tanh()",
             f"{z}.exp()", f"{z} ** 2", f"{z} ** 1", f"{z} * {b}", f"{b}.relu() * {z}",
             f"({b} * 0).relu()", f"({b} + {z}).relu()"]
    nodes = [p.let(form, 0.0) for form in rng.sample(forms, rng.randint(1, 3))]
    out = p.let(" + ".join(nodes), 0.0) if len(nodes) > 1 else nodes[0]
    p.lines.append(f"{out}.backward()")
    p.show()
    return p.lines


_SHARED = [
    ["{b} = {a} * {a}"], ["{b} = {a} + {a}"], ["{b} = {a} * {a} * {a}"],
    ["{b} = {a} + {a} + {a}"], ["{b} = {a} - {a}"], ["{b} = {a} / {a}"],
    ["{b} = {a} * 2", "{c} = {a} + 3", "{d} = {b} * {c}"],
    ["{b} = {a}.tanh()", "{c} = {b} * {b} + {b}"],
    ["{b} = {a} * 3", "{c} = {b} + {b} * {b} - {b}"],
    ["{b} = {a}.exp()", "{c} = {b} / ({b} + 1)", "{d} = {c} * {a}"],
    ["{b} = {a} ** 2", "{c} = {b} * {a}", "{d} = {c} + {b} + {a}"],
    ["{b} = {a}.relu()", "{c} = {b} * {a} + {b}"],
    ["{b} = 2 - {a}", "{c} = {a} * {b}", "{d} = {c} / {b}"],
]


def mg_shared(rng: random.Random, turn: int) -> list[str]:
    """A node used twice or three times: a * a, a + a + a, diamonds."""
    p = _Program(rng)
    value = _num(rng, 0.3, 1.5) * rng.choice([1, -1])
    a = p.let(_mg_value(value), value)
    template = _SHARED[turn % len(_SHARED)]
    names = {"a": a, "b": "b", "c": "c", "d": "d"}
    for line in template:
        p.lines.append(line.format(**names))
        p.values[line.split(" = ")[0].format(**names)] = 0.0
    p.lines.append(f"{list(p.values)[-1]}.backward()")
    p.show()
    return p.lines


def mg_dag(rng: random.Random, turn: int) -> list[str]:
    """A random graph of every op, with shared nodes; backward from the last node, which
    mostly adds up the nodes nothing else uses (the rest get no gradient)."""
    p = _Program(rng)
    leaves = rng.randint(1, 3)
    out = _mg_dag(p, leaves, rng.randint(3, 10))
    loose = p.dangling(leaves)
    if loose and rng.random() < 0.7:
        out = p.let(" + ".join([out, *loose[:3]]), 0.0)
    p.lines.append(f"{out}.backward()")
    p.show()
    return p.lines


def mg_twice(rng: random.Random, turn: int) -> list[str]:
    """backward() twice: the second pass adds on top of the first."""
    p = _Program(rng)
    out = _mg_dag(p, rng.randint(1, 2), rng.randint(2, 6))
    p.lines.append(f"{out}.backward()")
    p.show()
    p.lines.append(f"{out}.backward()")
    p.show()
    return p.lines


def mg_zero_grad(rng: random.Random, turn: int) -> list[str]:
    """zero_grad on the root (or on an inner node: only what it reaches), then again."""
    p = _Program(rng)
    out = _mg_dag(p, rng.randint(1, 3), rng.randint(2, 7))
    names = list(p.values)
    p.lines.append(f"{out}.backward()")
    target = out if rng.random() < 0.6 else rng.choice(names)
    p.lines.append(f"zero_grad({target})")
    p.show()
    p.lines.append(f"{out}.backward()")
    p.show()
    return p.lines


def mg_topo(rng: random.Random, turn: int) -> list[str]:
    """build_topo: the exact order where only one is valid, else what every valid one has."""
    p = _Program(rng)
    if rng.random() < 0.4:  # a chain without constants: exactly one topological order
        (x,) = _mg_leaves(p, 1, away=0.3)
        for _ in range(rng.randint(0, 5)):
            vx = p.values[x]
            choices = ["tanh", "x * x", "x + x", "** 2"] + (["exp"] if vx <= 3 else []) + \
                (["relu"] if abs(vx) >= 0.05 else [])
            op = rng.choice(choices)
            expr, value = {"tanh": (f"{x}.tanh()", math.tanh(vx)),
                           "exp": (f"{x}.exp()", math.exp(min(vx, 3))),
                           "relu": (f"{x}.relu()", max(vx, 0.0)),
                           "x * x": (f"{x} * {x}", vx * vx), "x + x": (f"{x} + {x}", 2 * vx),
                           "** 2": (f"{x} ** 2", vx * vx)}[op]
            if abs(value) > 1e3:
                break
            x = p.let(expr, value)
        nodes = ", ".join(f"{n}={n}" for n in p.values)
        p.lines += [f"names = {{id(v): k for k, v in dict({nodes}).items()}}",
                    f"order = build_topo({x})",
                    "print(len(order), [names.get(id(n), '?') for n in order])"]
    else:
        out = _mg_dag(p, rng.randint(1, 3), rng.randint(2, 9))
        nodes = ", ".join(f"{n}={n}" for n in p.values)
        p.lines += [f"names = {{id(v): k for k, v in dict({nodes}).items()}}",
                    f"order = build_topo({out})",
                    "pos = {id(n): i for i, n in enumerate(order)}",
                    f"print(len(order), len(pos), order[-1] is {out})",
                    "print(all(id(p) in pos and pos[id(p)] < pos[id(n)] "
                    "for n in order for p in n._prev))",
                    "print(sorted(names[id(n)] for n in order if id(n) in names))"]
    p.show()
    return p.lines


def mg_closure(rng: random.Random, turn: int) -> list[str]:
    """One node's _backward() alone, on preset gradients: it adds, and only to its operands."""
    p = _Program(rng)
    value = _num(rng, 0.3, 2.0)
    a = p.let(_mg_value(value), value)
    (b,) = _mg_leaves(p, 1, away=0.3)
    forms = [f"{a} + {b}", f"{a} * {b}", f"{a} ** {rng.choice([2, 3, -1, 0.5, -1.5])}",
             f"{a}.tanh()", f"{a}.exp()", f"{a}.relu()", f"{b}.relu()", f"-{a}", f"{a} - {b}",
             f"{a} / {b}", f"2 + {a}", f"{a} + 2", f"3 * {a}", f"{a} * 3", f"2 - {a}",
             f"2 / {a}", f"{a} * {a}", f"{a} + {a}"]
    if rng.random() < 0.7:
        p.lines.append(f"{a}.grad = {_num(rng, -1, 1)!r}")
    if rng.random() < 0.5:
        p.lines.append(f"{b}.grad = {_num(rng, -1, 1)!r}")
    out = p.let(forms[turn % len(forms)], 0.0)
    p.lines.append(f"{out}.grad = {_num(rng, -2, 2, away=0.1)!r}")
    for _ in range(rng.choice([1, 1, 2])):
        p.lines.append(f"{out}._backward()")
    p.show()
    return p.lines


def mg_preset(rng: random.Random, turn: int) -> list[str]:
    """Gradients already there: backward() seeds the root with 1.0 and adds to the rest."""
    p = _Program(rng)
    out = _mg_dag(p, rng.randint(1, 2), rng.randint(1, 5))
    for name in rng.sample(list(p.values), rng.randint(1, len(p.values))):
        p.lines.append(f"{name}.grad = {_num(rng, -2, 2)!r}")
    p.lines.append(f"{out}.backward()")
    p.show()
    return p.lines


_DEEP_BODIES = [
    "h = (h * {w} + {b}).tanh()", "h = h * {w} + {b} * 0.01", "h = (h + {b}).relu() * {w}",
    "h = h * 0.99 + ({b} * h).tanh() * 0.01", "h = -(h * {w}) + {b}",
    "h = (h * {w}).exp() * 0.5 + {b} * 0.1", "h = h + {b} / 300",
]


def mg_deep(rng: random.Random, turn: int) -> list[str]:
    """Hundreds of nodes in a chain (a loop builds it), and build_topo's length."""
    p = _Program(rng)
    a = p.let(_mg_value(_num(rng, -1, 1, away=0.1)), 0.0)
    b = p.let(_mg_value(_num(rng, -1, 1, away=0.1)), 0.0)
    w = repr(round(rng.uniform(0.5, 1.0), 2) * rng.choice([1, -1]))
    body = rng.choice(_DEEP_BODIES).format(w=_fmt(float(w)), b=b)
    p.lines += [f"h = {a}", f"for i in range({rng.randint(100, 400)}):", f"    {body}",
                "print(len(build_topo(h)))", "h.backward()"]
    p.show([a, b, "h"])
    if rng.random() < 0.5:
        p.lines += ["zero_grad(h)", "h.backward()"]
        p.show([a, b, "h"])
    return p.lines


def mg_prev(rng: random.Random, turn: int) -> list[str]:
    """Each primitive's operands (_prev, as a set of names) and its data."""
    p = _Program(rng)
    a, b = _mg_leaves(p, 2, away=0.3)
    forms = [f"{a} + {b}", f"{a} * {b}", f"{a} + {a}", f"{a} * {a}", f"{a} ** 2",
             f"{a}.tanh()", f"{a}.exp()", f"{a}.relu()", f"{a} + 2", f"{a} * 2"]
    out = p.let(rng.choice(forms), 0.0)
    p.lines += [f"names = {{id({a}): '{a}', id({b}): '{b}'}}",
                f"print(sorted({{names.get(id(v), str(v.data)) for v in {out}._prev}}))",
                f"print(len(build_topo({out})))"]
    p.lines.append(f"{out}.backward()")
    p.show()
    return p.lines


_EDGES = [
    ["a = Value(0.0)", "b = a ** -1"],
    ["a = Value(1.5)", "b = a / 0"],
    ["a = Value(1.5)", "b = 0 / a", "b.backward()"],
    ["a = Value(800.0)", "b = a.exp()"],
    ["a = Value(-800.0)", "b = a.exp()", "b.backward()"],
    ["a = Value(40.0)", "b = a.tanh()", "b.backward()"],
    ["a = Value(-40.0)", "b = a.tanh()", "b.backward()"],
    ["a = Value(2.0)", "b = a ** Value(2.0)"],
    ["a = Value(0.0)", "b = a ** 0.5", "b.backward()"],
    ["a = Value(0.0)", "b = a ** 0", "b.backward()"],
    ["a = Value(2.0)", "b = a ** 0", "b.backward()"],
    ["a = Value(-2.0)", "b = a ** 3", "b.backward()"],
    ["a = Value(3)", "b = a * 2", "b.backward()"],
    ["a = Value(1.5)", "a.backward()"],
    ["a = Value(1e-8)", "b = a.relu()", "b.backward()"],
    ["a = Value(-1e-8)", "b = a.relu()", "b.backward()"],
    ["a = Value(2.0)", "b = a + a", "b.grad = 3.0", "b._backward()", "b._backward()"],
]


def mg_edge(rng: random.Random, turn: int) -> list[str]:
    """Division by zero, overflow, saturation, a Value exponent, a leaf's own backward()."""
    lines = list(_EDGES[turn % len(_EDGES)])
    names = [line.split(" = ")[0] for line in lines if " = " in line and "." not in
             line.split(" = ")[0]]
    return [*lines, "show(" + ", ".join(f"{n}={n}" for n in names) + ")"]


MICROGRAD_FAMILIES: list[Callable[[random.Random, int], list[str]]] = [
    mg_number, mg_values, mg_power, mg_unary, mg_kink, mg_shared, mg_dag, mg_dag, mg_twice,
    mg_zero_grad, mg_topo, mg_closure, mg_preset, mg_deep, mg_prev, mg_edge, mg_number,
    mg_dag,
]


# -------------------------------------------------------------------------------- babygrad

def _literal(array: np.ndarray) -> str:
    return repr(np.asarray(array, dtype=np.float64).tolist())


class _Tensors(_Program):
    def __init__(self, rng: random.Random):
        super().__init__(rng)
        self.dtype = "float32" if rng.random() < 0.7 else "float64"
        self.requires: dict[str, bool] = {}

    def array(self, shape: tuple[int, ...], lo: float = -2.0, hi: float = 2.0,
              away: float = 0.0) -> np.ndarray:
        size = int(np.prod(shape, dtype=np.int64))
        return np.array([_num(self.rng, lo, hi, away) for _ in range(size)]).reshape(shape)

    def leaf(self, value: np.ndarray, requires_grad: bool = True) -> str:
        name = self.let(f"Tensor({_literal(value)}, requires_grad={requires_grad}, "
                        f"dtype={self.dtype!r})", value)
        self.requires[name] = requires_grad
        return name

    def upstream(self, shape: tuple[int, ...], name: str = "up") -> str:
        """A random gradient of ``shape``, never all ones."""
        g = self.array(shape, -2.0, 2.0, away=0.1)
        if g.size and np.all(g == 1.0):
            g.flat[0] = -0.5
        self.lines.append(f"{name} = Tensor({_literal(g)}, requires_grad=False, "
                          f"dtype={self.dtype!r})")
        return name

    def backward(self, out: str, random_grad: bool | None = None) -> None:
        shape = np.shape(self.values[out])
        if random_grad is None:
            random_grad = self.rng.random() < 0.75
        if random_grad:
            self.lines.append(f"{out}.backward({self.upstream(shape)})")
        else:
            self.lines.append(f"{out}.backward()")

    def scalar(self) -> tuple[str, float]:
        """A plain number as source: int, float or a numpy scalar, never 0."""
        k = _const(self.rng)
        r = self.rng.random()
        if r < 0.15:
            return f"np.float32({float(k)!r})", float(np.float32(k))
        if r < 0.25:
            return f"np.float64({float(k)!r})", float(k)
        return _fmt(k), float(k)


def _shape(rng: random.Random, ndim: int | None = None) -> tuple[int, ...]:
    ndim = rng.choice([0, 1, 2, 2, 3, 3]) if ndim is None else ndim
    return tuple(rng.randint(1, 3 if ndim > 2 else 4) for _ in range(ndim))


def _broadcast_pair(rng: random.Random) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes that broadcast: size-1 axes, missing leading axes, or equal."""
    out = _shape(rng, rng.choice([0, 1, 2, 2, 3, 3, 4]))

    def operand() -> tuple[int, ...]:
        drop = rng.randint(0, len(out)) if rng.random() < 0.35 else 0
        return tuple(1 if rng.random() < 0.25 else n for n in out[drop:])

    if rng.random() < 0.3:
        return out, out
    return operand(), operand()


_BINARY: dict[str, tuple[list[str], Callable[[Any, Any], Any]]] = {
    "add": (["{x} + {y}", "ops.add({x}, {y})", "ops.Add()({x}, {y})"], np.add),
    "sub": (["{x} - {y}", "ops.sub({x}, {y})", "ops.Sub()({x}, {y})"], np.subtract),
    "mul": (["{x} * {y}", "ops.mul({x}, {y})", "ops.Mul()({x}, {y})"], np.multiply),
    "div": (["{x} / {y}", "ops.divide({x}, {y})", "ops.Div()({x}, {y})"], np.divide),
    "pow": (["{x} ** {y}", "ops.power({x}, {y})", "ops.Pow()({x}, {y})"], np.power),
}
_UNARY: dict[str, tuple[list[str], Callable[[Any], Any]]] = {
    "neg": (["-{x}", "ops.negate({x})", "ops.Negate()({x})"], np.negative),
    "log": (["{x}.log()", "ops.log({x})", "ops.Log()({x})"], np.log),
    "exp": (["{x}.exp()", "ops.exp({x})", "ops.Exp()({x})"], np.exp),
    "sqrt": (["{x}.sqrt()", "ops.sqrt({x})", "ops.Sqrt()({x})"], np.sqrt),
    "abs": (["{x}.abs()", "ops.abs({x})", "ops.Abs()({x})"], np.abs),
    "relu": (["{x}.relu()", "ops.relu({x})", "ops.ReLU()({x})"], lambda x: np.maximum(x, 0)),
    "sigmoid": (["{x}.sigmoid()", "ops.sigmoid({x})", "ops.Sigmoid()({x})"],
                lambda x: 1 / (1 + np.exp(-x))),
    "tanh": (["{x}.tanh()", "ops.tanh({x})", "ops.Tanh()({x})"], np.tanh),
}
_SCALAR_FORMS: list[tuple[str, Callable[[Any, float], Any], str]] = [
    ("{x} + {k}", lambda x, k: x + k, ""), ("{k} + {x}", lambda x, k: k + x, ""),
    ("ops.add_scalar({x}, {k})", lambda x, k: x + k, ""),
    ("ops.AddScalar({k})({x})", lambda x, k: x + k, ""),
    ("{x} - {k}", lambda x, k: x - k, ""), ("{k} - {x}", lambda x, k: k - x, ""),
    ("{x} * {k}", lambda x, k: x * k, ""), ("{k} * {x}", lambda x, k: k * x, ""),
    ("ops.mul_scalar({x}, {k})", lambda x, k: x * k, ""),
    ("ops.MulScalar({k})({x})", lambda x, k: x * k, ""),
    ("{x} / {k}", lambda x, k: x / k, ""), ("{k} / {x}", lambda x, k: k / x, "away"),
    ("ops.divide_scalar({x}, {k})", lambda x, k: x / k, ""),
    ("ops.DivScalar({k})({x})", lambda x, k: x / k, ""),
]
_POWER_FORMS = ["{x} ** {k}", "ops.power_scalar({x}, {k})", "ops.PowerScalar({k})({x})"]


def _ok(value: Any, limit: float = 50.0) -> bool:
    array = np.asarray(value, dtype=np.float64)
    return bool(np.all(np.isfinite(array)) and np.all(np.abs(array) <= limit)
                and array.size <= 48)


def _unary_ok(op: str, x: np.ndarray) -> bool:
    if op in ("log", "sqrt"):
        return bool(np.all(x >= 0.1))
    if op in ("abs", "relu"):
        return bool(np.all(np.abs(x) >= 0.05))
    if op == "exp":
        return bool(np.all(x <= 3))
    return True


def _binary_ok(op: str, x: np.ndarray, y: np.ndarray) -> bool:
    try:
        np.broadcast_shapes(np.shape(x), np.shape(y))
    except ValueError:
        return False
    if op == "div":
        return bool(np.all(np.abs(y) >= 0.3))
    if op == "pow":
        return bool(np.all(x >= 0.2) and np.all(np.abs(y) <= 2.5))
    return True


def _power_exponent(rng: random.Random, x: np.ndarray) -> float | None:
    if rng.random() < 0.5:
        k = rng.choice([-2, -1, 0, 1, 2, 3])
        return None if k <= 0 and not np.all(np.abs(x) >= 0.3) else k
    k = rng.choice([0.5, -0.5, 1.5, 2.0, -1.0, 0.25, 2.5])
    return k if np.all(x >= 0.2) else None


def _reshape_target(rng: random.Random, shape: tuple[int, ...]) -> tuple[int, ...]:
    size = int(np.prod(shape, dtype=np.int64))
    dims: list[int] = []
    left = size
    for _ in range(rng.randint(0, 3)):
        divisors = [d for d in range(1, left + 1) if left % d == 0]
        d = rng.choice(divisors)
        dims.append(d)
        left //= d
    if left != 1 or not dims or rng.random() < 0.3:
        dims.append(left)
    rng.shuffle(dims)
    if size and dims and rng.random() < 0.3:
        dims[rng.randrange(len(dims))] = -1
    return tuple(dims)


_SHAPE_CLASSES = {"reshape": "Reshape", "transpose": "Transpose", "sum": "Summation",
                  "broadcast": "BroadcastTo"}
_SHAPE_FORMS = {
    "reshape": ["{x}.reshape({a})", "ops.reshape({x}, {a})"],
    "transpose": ["{x}.transpose({a})", "ops.transpose({x}, {a})"],
    "sum": ["{x}.sum({a})", "ops.summation({x}, {a})"],
    "broadcast": ["{x}.broadcast_to({a})", "ops.broadcast_to({x}, {a})"],
}
_DEFAULTED = {"transpose": ["{x}.transpose()", "ops.transpose({x})", "{x}.transpose(axes=None)"],
              "sum": ["{x}.sum()", "ops.summation({x})", "{x}.sum(axes=None)"]}


def _shape_choice(rng: random.Random, v: np.ndarray, kind: str | None = None,
                  variant: int | None = None) -> tuple[str, str | None, Any] | None:
    """A shape op on ``v``: (kind, its argument as source or None for the default, value).
    reshape (maybe with -1), transpose (None or a permutation), sum (None, an int, maybe
    negative, or a tuple), broadcast_to (new leading axes, stretched size-1 axes). A
    ``variant`` picks the default argument or not (transpose), or which kind (sum)."""
    shape = np.shape(v)
    ndim = len(shape)
    kind = kind or rng.choice(["reshape", "transpose", "sum", "sum", "broadcast"])
    if kind == "reshape":
        target = _reshape_target(rng, shape)
        return kind, repr(target), np.reshape(v, target)
    if kind == "transpose":
        if ndim < 2:
            return None
        if (rng.random() < 0.5) if variant is None else variant % 2 == 0:
            return kind, None, np.swapaxes(v, -1, -2)
        axes = list(range(ndim))
        while axes == list(range(ndim)):
            rng.shuffle(axes)
        return kind, repr(tuple(axes)), np.transpose(v, axes)
    if kind == "sum":
        r = rng.random() if variant is None else (0.0, 0.5, 0.9)[variant % 3]
        if ndim == 0 or r < 0.3:
            return kind, None, np.sum(v)
        if r < 0.65:
            axes: Any = rng.randrange(-ndim, ndim)
        else:
            axes = tuple(rng.sample(range(ndim), rng.randint(1, ndim)))
            if rng.random() < 0.3:
                axes = tuple(a - ndim for a in axes)
        return kind, repr(axes), np.sum(v, axis=axes)
    target = [rng.randint(2, 3) if n == 1 and rng.random() < 0.7 else n for n in shape]
    lead = rng.randint(0 if target != list(shape) else 1, 2)
    target = [rng.randint(1, 3) for _ in range(lead)] + target
    return kind, repr(tuple(target)), np.broadcast_to(v, tuple(target))


def _shape_class(kind: str, argument: str | None) -> str:
    return f"ops.{_SHAPE_CLASSES[kind]}({argument or ''})"


def _shape_op(p: _Tensors, x: str, kind: str | None = None,
              variant: int | None = None) -> tuple[str, Any] | None:
    """A shape op on tensor ``x`` as a method, a function or a Function: (source, value)."""
    made = _shape_choice(p.rng, p.values[x], kind, variant)
    if made is None:
        return None
    kind, argument, value = made
    forms = [*(_DEFAULTED[kind] + ["{x}.%s(None)" % ("sum" if kind == "sum" else "transpose")]
               if argument is None else _SHAPE_FORMS[kind]),
             _shape_class(kind, argument) + "({x})"]
    form = (p.rng.choice(forms) if variant is None
            else forms[variant // (3 if kind == "sum" else 2) % len(forms)])
    return form.format(x=x, a=argument), value


_MATMUL_FORMS = ["{x} @ {y}", "{x}.matmul({y})", "ops.matmul({x}, {y})", "ops.MatMul()({x}, {y})"]


def _matmul_shapes(rng: random.Random) -> tuple[tuple[int, ...], tuple[int, ...]]:
    m, k, n = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 4)
    b, c = rng.randint(2, 3), rng.randint(2, 3)
    return rng.choice([((m, k), (k, n)), ((m, k), (k, n)), ((b, m, k), (b, k, n)),
                       ((b, m, k), (k, n)), ((m, k), (b, k, n)), ((1, m, k), (b, k, n)),
                       ((b, m, k), (1, k, n)), ((c, 1, m, k), (b, k, n)),
                       ((b, 1, m, k), (1, c, k, n))])


def _tensor_step(p: _Tensors) -> str | None:
    """One random op on the tensors so far, or None if it leaves the ops' domains."""
    rng = p.rng
    x = p.pick()
    vx = p.values[x]
    kind = rng.choice(["binary", "binary", "binary", "scalar", "scalar", "unary", "unary",
                       "unary", "shape", "shape", "matmul"])
    if kind == "binary":
        y = p.pick(besides=x)
        op = rng.choice(list(_BINARY))
        forms, fn = _BINARY[op]
        if not _binary_ok(op, vx, p.values[y]):
            return None
        expr, value = rng.choice(forms).format(x=x, y=y), fn(vx, p.values[y])
    elif kind == "scalar":
        if rng.random() < 0.25:
            k = _power_exponent(rng, vx)
            if k is None:
                return None
            expr, value = rng.choice(_POWER_FORMS).format(x=x, k=_fmt(k)), np.power(vx, k)
        else:
            template, fn, guard = rng.choice(_SCALAR_FORMS)
            if guard and not np.all(np.abs(vx) >= 0.3):
                return None
            ks, k = p.scalar()
            expr, value = template.format(x=x, k=ks), fn(vx, k)
    elif kind == "unary":
        op = rng.choice(list(_UNARY))
        if not _unary_ok(op, vx):
            return None
        forms, fn = _UNARY[op]
        expr, value = rng.choice(forms).format(x=x), fn(vx)
    elif kind == "shape":
        made = _shape_op(p, x)
        if made is None:
            return None
        expr, value = made
    else:
        y = p.pick()
        vy = p.values[y]
        if np.ndim(vx) < 2 or np.ndim(vy) < 2 or np.shape(vx)[-1] != np.shape(vy)[-2]:
            return None
        try:
            value = np.matmul(vx, vy)
        except ValueError:
            return None
        expr = rng.choice(_MATMUL_FORMS).format(x=x, y=y)
    if not _ok(value):
        return None
    return p.let(expr, np.asarray(value, dtype=np.float64))


def _requires(rng: random.Random, count: int) -> list[bool]:
    flags = [rng.random() < 0.75 for _ in range(count)]
    if not any(flags):
        flags[rng.randrange(count)] = True
    return flags


def bg_binary(rng: random.Random, turn: int) -> list[str]:
    """add sub mul div pow, as operator, function and Function, with broadcasting."""
    p = _Tensors(rng)
    op = list(_BINARY)[turn % len(_BINARY)]
    forms, fn = _BINARY[op]
    form = forms[turn // len(_BINARY) % len(forms)]
    sa, sb = _broadcast_pair(rng)
    va = p.array(sa, 0.3, 2.0) if op == "pow" else p.array(sa)
    vb = (p.array(sb, -2.0, 2.0, away=0.3) if op == "div" else p.array(sb, -1.5, 2.0)
          if op == "pow" else p.array(sb))
    if op == "pow" and rng.random() < 0.5:  # exponents 0, 1, 2 exactly among others
        vb = np.array([rng.choice([0.0, 1.0, 2.0, -1.0, 0.5, _num(rng, -1.5, 2.0)])
                       for _ in range(vb.size)]).reshape(vb.shape)
    flags = [False, False] if rng.random() < 0.1 else _requires(rng, 2)
    a, b = p.leaf(va, flags[0]), p.leaf(vb, flags[1])
    out = p.let(form.format(x=a, y=b), fn(va, vb))
    p.backward(out)
    p.show()
    return p.lines


def bg_scalar(rng: random.Random, turn: int) -> list[str]:
    """A plain number (int, float, numpy scalar) on either side, and the *_scalar ops."""
    p = _Tensors(rng)
    shape = _shape(rng)
    choice = turn % (len(_SCALAR_FORMS) + len(_POWER_FORMS) + 1)
    if choice < len(_POWER_FORMS):
        v = p.array(shape, 0.3, 2.0)
        a = p.leaf(v, rng.random() < 0.9)
        k = _power_exponent(rng, v)
        k = 2 if k is None else k
        out = p.let(_POWER_FORMS[choice].format(x=a, k=_fmt(k)), np.power(v, k))
    elif choice == len(_POWER_FORMS):  # a number to the power of a Tensor: what does it do?
        v = p.array(shape, -1.0, 1.0)
        a = p.leaf(v, True)
        out = p.let(f"2 ** {a}", np.power(2.0, v))
    else:
        template, fn, guard = _SCALAR_FORMS[choice - len(_POWER_FORMS) - 1]
        v = p.array(shape, -2.0, 2.0, away=0.3 if guard else 0.0)
        a = p.leaf(v, rng.random() < 0.9)
        ks, k = p.scalar()
        out = p.let(template.format(x=a, k=ks), fn(v, k))
    p.backward(out)
    p.show()
    return p.lines


def bg_arrays(rng: random.Random, turn: int) -> list[str]:
    """A numpy array or a list on either side of an operator (wrapped as a constant)."""
    p = _Tensors(rng)
    sa, sb = _broadcast_pair(rng)
    op = rng.choice(["+", "-", "*", "/"])
    va = p.array(sa, -2.0, 2.0, away=0.3)
    vb = p.array(sb, -2.0, 2.0, away=0.3)
    a = p.leaf(va, True)
    spelled = (f"np.array({_literal(vb)})" if rng.random() < 0.6 or not sb
               else _literal(vb))
    fn = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[op]
    if rng.random() < 0.5:
        out = p.let(f"{a} {op} {spelled}", fn(va, vb))
    else:
        out = p.let(f"{spelled} {op} {a}", fn(vb, va))
    if rng.random() < 0.2 and len(sa) >= 2:
        w = p.array((sa[-1], 2))
        out = p.let(f"{a} @ np.array({_literal(w)})", np.matmul(va, w))
    p.backward(out)
    p.show()
    return p.lines


def bg_unary(rng: random.Random, turn: int) -> list[str]:
    """negate log exp sqrt abs relu sigmoid tanh, as method, function and Function, composed."""
    p = _Tensors(rng)
    op = list(_UNARY)[turn % len(_UNARY)]
    lo, hi, away = {"log": (0.2, 3.0, 0.0), "sqrt": (0.2, 3.0, 0.0), "abs": (-2, 2, 0.1),
                    "relu": (-2, 2, 0.1)}.get(op, (-2.0, 2.0, 0.0))
    v = p.array(_shape(rng), lo, hi, away)
    x = p.leaf(v, rng.random() < 0.9)
    forms, fn = _UNARY[op]
    x = p.let(forms[turn // len(_UNARY) % len(forms)].format(x=x), fn(v))
    for _ in range(rng.randint(0, 2)):
        op = rng.choice(list(_UNARY))
        if _unary_ok(op, p.values[x]):
            forms, fn = _UNARY[op]
            x = p.let(rng.choice(forms).format(x=x), fn(p.values[x]))
    p.backward(x)
    p.show()
    return p.lines


def bg_kink(rng: random.Random, turn: int) -> list[str]:
    """relu and abs at exactly 0 (derivative 0 there); sigmoid and tanh saturated; a Tensor
    power at base 0 and exponents 0, 1, 2, 3 (no gradient to the base where the exponent is
    0, none to the exponent where the base is 0)."""
    p = _Tensors(rng)
    shape = _shape(rng, rng.randint(1, 2))
    v = p.array(shape)
    v.flat[rng.randrange(v.size)] = 0.0
    if rng.random() < 0.5:
        v.flat[rng.randrange(v.size)] = 0.0
    r = (turn % 4) / 4 + rng.random() / 4
    if r < 0.25:
        base = np.abs(v)
        exponent = np.array([float(rng.choice([0, 1, 2, 3])) for _ in range(v.size)])
        exponent = exponent.reshape(v.shape)
        a, b = p.leaf(base, True), p.leaf(exponent, rng.random() < 0.8)
        out = p.let(rng.choice(_BINARY["pow"][0]).format(x=a, y=b), np.power(base, exponent))
    elif r < 0.65:
        x = p.leaf(v, True)
        op = rng.choice(["relu", "abs"])
        forms, fn = _UNARY[op]
        out = p.let(rng.choice(forms).format(x=x), fn(v))
    elif r < 0.75:
        x = p.leaf(v, True)
        d = p.let(f"{x} - {x}", v - v)
        out = p.let(rng.choice([f"{d}.relu()", f"{d}.abs()"]), np.zeros_like(v))
    else:
        big = np.array([rng.choice([-60.0, -30.0, -12.0, 12.0, 30.0, 60.0])
                        for _ in range(v.size)]).reshape(v.shape)
        x = p.leaf(big, True)
        op = rng.choice(["sigmoid", "tanh"])
        forms, fn = _UNARY[op]
        out = p.let(rng.choice(forms).format(x=x), fn(big))
    p.backward(out)
    p.show()
    return p.lines


def bg_shape(rng: random.Random, turn: int) -> list[str]:
    """reshape, transpose, summation, broadcast_to: one or two, then a random gradient."""
    p = _Tensors(rng)
    kind = list(_SHAPE_CLASSES)[turn % len(_SHAPE_CLASSES)]
    ndim = rng.choice([2, 2, 3, 3, 4]) if kind == "transpose" or rng.random() < 0.8 else \
        rng.choice([0, 1])
    v = p.array(_shape(rng, ndim))
    x = p.leaf(v, rng.random() < 0.9)
    made, wanted = 0, rng.choice([1, 1, 2])
    for _ in range(40):
        if made == wanted:
            break
        step = (_shape_op(p, x, kind, turn // len(_SHAPE_CLASSES)) if made == 0
                else _shape_op(p, x))
        if step is not None and _ok(step[1]):
            x = p.let(step[0], np.asarray(step[1], dtype=np.float64))
            made += 1
    p.backward(x)
    p.show()
    return p.lines


def bg_matmul(rng: random.Random, turn: int) -> list[str]:
    """Matrix products: 2-D, batched, and batch axes that broadcast (size 1 or missing)."""
    p = _Tensors(rng)
    sa, sb = _matmul_shapes(rng)
    va, vb = p.array(sa), p.array(sb)
    flags = _requires(rng, 2)
    a, b = p.leaf(va, flags[0]), p.leaf(vb, flags[1])
    out = p.let(_MATMUL_FORMS[turn % len(_MATMUL_FORMS)].format(x=a, y=b), np.matmul(va, vb))
    if rng.random() < 0.3:
        out = p.let(f"{out}.sum()", np.sum(p.values[out]))
        p.backward(out, random_grad=False)
    else:
        p.backward(out)
    p.show()
    return p.lines


_DIRECT: list[tuple[str, int, str]] = [
    ("ops.Add()", 2, ""), ("ops.Sub()", 2, ""), ("ops.Mul()", 2, ""), ("ops.Div()", 2, "div"),
    ("ops.Pow()", 2, "pow"), ("ops.Negate()", 1, ""), ("ops.Log()", 1, "pos"),
    ("ops.Exp()", 1, ""), ("ops.Sqrt()", 1, "pos"), ("ops.Abs()", 1, "away"),
    ("ops.ReLU()", 1, "away"), ("ops.Sigmoid()", 1, ""), ("ops.Tanh()", 1, ""),
    ("ops.AddScalar({k})", 1, ""), ("ops.MulScalar({k})", 1, ""),
    ("ops.DivScalar({k})", 1, ""), ("ops.PowerScalar({p})", 1, "pos"),
    ("ops.MatMul()", 2, "matmul"), ("", 1, "reshape"), ("", 1, "transpose"), ("", 1, "sum"),
    ("", 1, "broadcast"),
]


def bg_direct(rng: random.Random, turn: int) -> list[str]:
    """A Function's backward(out_grad, node) called alone, with a random out_grad."""
    p = _Tensors(rng)
    spec, arity, kind = _DIRECT[turn % len(_DIRECT)]
    if kind == "matmul":
        sa, sb = _matmul_shapes(rng)
        inputs = [p.array(sa), p.array(sb)]
    elif arity == 2:
        sa, sb = _broadcast_pair(rng)
        inputs = [p.array(sa, 0.3, 2.0) if kind == "pow" else p.array(sa),
                  p.array(sb, -2.0, 2.0, away=0.3) if kind == "div" else p.array(sb)]
    else:
        shape = _shape(rng, rng.choice([2, 2, 3]) if kind == "transpose" else None)
        lo, away = (0.3, 0.0) if kind == "pos" else (-2.0, 0.3 if kind == "away" else 0.0)
        inputs = [p.array(shape, lo, 2.0, away)]
    names = [p.leaf(v, f) for v, f in zip(inputs, _requires(rng, arity), strict=True)]
    if not spec:
        made = None
        while made is None:
            made = _shape_choice(rng, inputs[0], kind)
        kind, argument, value = made
        op = _shape_class(kind, argument)
    else:
        ks, k = p.scalar()
        pw = rng.choice([2, 3, -1, 0.5, -0.5, 1.5])
        op = spec.format(k=ks, p=_fmt(pw))
        value = _direct_value(spec, inputs, k, pw)
    p.lines.append(f"op = {op}")
    out = p.let("op(" + ", ".join(names) + ")", np.asarray(value, dtype=np.float64))
    up = p.upstream(np.shape(value))
    call = rng.choice(["op.backward({up}, {out})", "{out}._op.backward({up}, {out})"])
    p.lines += ["parts = " + call.format(up=up, out=out), "show_parts(parts)"]
    p.show()
    return p.lines


def _direct_value(spec: str, inputs: list[np.ndarray], k: float, pw: float) -> np.ndarray:
    name = spec.split("(")[0].removeprefix("ops.")
    x = inputs[0]
    binary = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
              "Pow": np.power, "MatMul": np.matmul}
    if name in binary:
        return binary[name](x, inputs[1])
    unary = {"Negate": np.negative, "Log": np.log, "Exp": np.exp, "Sqrt": np.sqrt,
             "Abs": np.abs, "ReLU": lambda a: np.maximum(a, 0),
             "Sigmoid": lambda a: 1 / (1 + np.exp(-a)), "Tanh": np.tanh,
             "AddScalar": lambda a: a + k, "MulScalar": lambda a: a * k,
             "DivScalar": lambda a: a / k, "PowerScalar": lambda a: np.power(a, pw)}
    return np.asarray(unary[name](x), dtype=np.float64)


def bg_graph(rng: random.Random, turn: int) -> list[str]:
    """A random graph of every op with shared tensors and leaves that do not require grad."""
    p = _Tensors(rng)
    sa, sb = _broadcast_pair(rng)
    shapes = [sa, sb] + ([_shape(rng)] if rng.random() < 0.4 else [])
    for shape, flag in zip(shapes, _requires(rng, len(shapes)), strict=True):
        p.leaf(p.array(shape), flag)
    steps, made = rng.randint(2, 8), 0
    for _ in range(steps * 20):
        if made == steps:
            break
        if _tensor_step(p) is not None:
            made += 1
    out = list(p.values)[-1]
    loose = p.dangling(len(shapes))
    if rng.random() < 0.5 and (loose or np.ndim(p.values[out]) > 0):
        total = [out, *loose[:3]]
        out = p.let(" + ".join(f"{n}.sum()" for n in total),
                    sum(np.sum(p.values[n]) for n in total))
        p.backward(out, random_grad=rng.random() < 0.3)
    else:
        p.backward(out)
    p.show()
    return p.lines


def bg_backward(rng: random.Random, turn: int) -> list[str]:
    """Tensor.backward's API: default ones on a non-scalar, twice, from an inner tensor, on a
    leaf, on an output that does not require grad."""
    p = _Tensors(rng)
    sa, sb = _broadcast_pair(rng)
    case = rng.choice(["default", "twice", "inner", "leaf", "constant", "shared"])
    va, vb = p.array(sa, 0.3, 2.0), p.array(sb, -2.0, 2.0, away=0.3)
    flags = [False, False] if case == "constant" else _requires(rng, 2)
    a, b = p.leaf(va, flags[0]), p.leaf(vb, flags[1])
    c = p.let(f"{a} * {b}", va * vb)
    if case == "shared":
        out = p.let(f"{a} * {a} + {a} / {b} - {a}.log() * {c}",
                    va * va + va / vb - np.log(va) * va * vb)
    else:
        out = p.let(f"({c} + {a}).tanh()", np.tanh(va * vb + va))
    if case == "default":
        p.backward(out, random_grad=False)
    elif case == "twice":
        p.backward(out, random_grad=True)
        p.show()
        p.upstream(np.shape(p.values[out]), "up2")
        p.lines.append(f"{out}.backward(up2)")
    elif case == "inner":
        p.backward(c)
        p.show()
        p.backward(out)
    elif case == "leaf":
        p.backward(a, random_grad=rng.random() < 0.7)
    else:
        p.backward(out)
    p.show()
    return p.lines


def bg_unbroadcast(rng: random.Random, turn: int) -> list[str]:
    """ops.unbroadcast on its own: sum a gradient back down to a shape it was broadcast from."""
    p = _Tensors(rng)
    target, _ = _broadcast_pair(rng)
    grown = [rng.randint(2, 3) if n == 1 and rng.random() < 0.7 else n for n in target]
    grown = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))] + grown
    g = p.array(tuple(grown))
    p.lines += [f"g = np.array({_literal(g)}, dtype=np.{p.dtype})",
                f"r = np.asarray(ops.unbroadcast(g, {tuple(target)!r}))",
                "print(r.shape, r.tolist())"]
    return p.lines


def bg_zero_d(rng: random.Random, turn: int) -> list[str]:
    """0-d tensors and Tensor(Tensor(...)) among n-d ones."""
    p = _Tensors(rng)
    s = p.leaf(np.array(_num(rng, 0.3, 2.0)), True)
    v = p.array(_shape(rng, rng.randint(1, 2)), -2.0, 2.0, away=0.3)
    t = p.leaf(v, rng.random() < 0.8)
    if rng.random() < 0.5:
        t2 = p.let(f"Tensor({t}, requires_grad=True, dtype={p.dtype!r})", v)
        t = t2
    sv = p.values[s]
    form, value = rng.choice([(f"{s} * {t}", sv * v), (f"{t} / {s}", v / sv),
                              (f"{t} - {s}", v - sv), (f"{s} ** 2 + {t}", sv**2 + v),
                              (f"{s}.sum() * {t}", sv * v), (f"{s} + {t}.sum()", sv + v.sum())])
    out = p.let(form, value)
    p.backward(out)
    p.show()
    return p.lines


_BG_DEEP = [
    ("h = (h * {w} + {b}).tanh()", "elementwise"), ("h = (h @ {m}).tanh() + {b}", "matmul"),
    ("h = h * 0.9 + ({b} * h).sigmoid() * 0.1", "elementwise"),
    ("h = (h - {b}).relu() + {w} * 0.5", "elementwise"),
]


def bg_deep(rng: random.Random, turn: int) -> list[str]:
    """Tens of ops in a chain (a loop builds it), with shared leaves."""
    p = _Tensors(rng)
    body, kind = rng.choice(_BG_DEEP)
    n = rng.randint(2, 3)
    a = p.leaf(p.array((2, n), -1, 1), True)
    w = p.leaf(p.array((n,), 0.5, 1.0), rng.random() < 0.8)
    b = p.leaf(p.array((n,), -0.5, 0.5, away=0.05), True)
    m = p.leaf(p.array((n, n), -0.6, 0.6), True) if kind == "matmul" else None
    p.lines += [f"h = {a}", f"for i in range({rng.randint(20, 80)}):",
                "    " + body.format(w=w, b=b, m=m), "out = h.sum()", "out.backward()"]
    p.show([*p.values, "h", "out"])
    return p.lines


BABYGRAD_FAMILIES: list[Callable[[random.Random, int], list[str]]] = [
    bg_binary, bg_binary, bg_scalar, bg_scalar, bg_arrays, bg_unary, bg_unary, bg_kink, bg_shape,
    bg_shape, bg_matmul, bg_matmul, bg_direct, bg_direct, bg_graph, bg_graph, bg_graph,
    bg_backward, bg_unbroadcast, bg_zero_d, bg_deep,
]
