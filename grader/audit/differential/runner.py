"""Runs programs through an engine folder and compares what they print.

Why it exists: ``differ`` needs the outcome of each generated program on two engines, taken in a
subprocess (the engine is untrusted: it may hang, crash or eat memory) and compared with a
tolerance; the reference's outcomes are cached, since the audit asks about many mutants
against one reference. What the programs are is ``programs``' business.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import resource
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import closing, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import ONE_THREAD
from grader.audit.differential.generate import generate
from grader.language.assignments import NAMES

ASSIGNMENTS = NAMES
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


def differ(
    reference: Path,
    candidate: Path,
    assignment: str,
    *,
    programs: int = 400,
    seed: int = 0,
    timeout: float = 60.0,
) -> Difference | None:
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


_NUMBER = re.compile(r"(?<![\w.])([-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|nan))(?![\w.])")


def same_text(expected: str, got: str, rtol: float, atol: float) -> bool:
    a, b = _NUMBER.split(expected), _NUMBER.split(got)
    if len(a) != len(b) or a[0::2] != b[0::2]:
        return False
    return all(
        _close(float(x), float(y), rtol, atol) for x, y in zip(a[1::2], b[1::2], strict=True)
    )


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
    for path in sorted(
        p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    ):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _reference_outcomes(
    reference: Path, assignment: str, programs: int, seed: int, timeout: float
) -> dict[int, Outcome]:
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


def run_all(
    engine: Path, assignment: str, sources: list[str], timeout: float = 60.0
) -> dict[int, Outcome]:
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
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8", **ONE_THREAD}


def _stream(
    engine: Path, assignment: str, sources: list[str], indices: list[int], timeout: float
) -> Iterator[tuple[int, Outcome]]:
    """Run ``sources[i]`` for ``i`` in ``indices``, in that order, in one subprocess, yielding
    each outcome as it arrives. If the run outlives ``timeout`` (wall) or dies, the program in
    flight is yielded as timed out (or crashed) and the stream ends there."""
    preload = "numpy" if assignment == "babygrad" else ""
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stderr:
        stdin.write(json.dumps([[i, sources[i]] for i in indices]).encode())
        stdin.seek(0)
        process = subprocess.Popen(
            [
                sys.executable,
                "-I",
                "-c",
                _DRIVER,
                str(Path(engine).resolve()),
                repr(min(timeout, PROGRAM_CPU_S)),
                preload,
            ],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=engine,
            env=_environment(),
            preexec_fn=_confine,
            start_new_session=True,
        )
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
