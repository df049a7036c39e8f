"""The grader's own mutation run: does a break in what decides trust and points fail a test?

The rubric audit asks whether the rubric notices a broken engine; this asks whether the
project's tests notice a broken grader. Its mutants are the audit's (``grader.workflows.
mutants.definition_mutants``: cosmic-ray's operators and the project's, the same rules), made
of the definitions of the modules in ``TARGETS`` that score items, judge answers, confine the
worker, validate its replies and key the ledger. Each mutant is written into a private copy of
the checkout (never the checkout: other tests may be running from it) and the module's fast
tests run there in a subprocess, ``pytest -x``, with a timeout. A failing, erroring or hung
run kills the mutant; a passing one lets it survive. A survivor is killed by a new test or
judged equivalent in ``tests/self-audit-judgements.yaml``, with the reason, as the audit's are.

It lives in ``tests/``, not ``grader/workflows/``: it runs the project's tests, which only a
checkout has, and nothing that grades needs it. ``python -m tests.self_audit`` is the full run
(``make self-audit``; docs/audit.md, "Auditing the grader"); ``tests/audit/test_self_audit.py`` runs
a seeded sample in ``make test``.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import difflib
import functools
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from grader.audit.audit import read_judgements
from grader.audit.mutants import Mutant, definition_mutants, definitions
from grader.layout import REPO
from tests.helpers.venvs import NOT_COPIED

JUDGEMENTS = Path(__file__).with_name("self-audit-judgements.yaml")
KILLED, SURVIVED = "killed", "survived"


# ------------------------------------------------------------------------------ the targets


def top_level(tree: ast.Module) -> list[str]:
    """Every top-level function, class and assignment: all of a small module decides."""
    return [name for name, _ in definitions(tree) if "." not in name]


def _called(node: ast.AST | None) -> str:
    """What a call calls (``f`` of ``f(x)``; ``close`` of ``tol.close(got, expected)``, with
    arguments), or ''."""
    if not isinstance(node, ast.Call):
        return ""
    if isinstance(node.func, ast.Name):
        return node.func.id
    return node.func.attr if isinstance(node.func, ast.Attribute) and node.args else ""


def _decides(function: ast.AST) -> bool:
    """Does ``function`` raise a ``WrongAnswer``, or compare within a tolerance (``mismatch``,
    ``tol.close(got, expected)``)?"""
    return any(
        (isinstance(node, ast.Raise) and _called(node.exc) == "WrongAnswer")
        or _called(node) in ("mismatch", "close")
        for node in ast.walk(function)
    )


def judges(tree: ast.Module) -> list[str]:
    """The functions and methods of a check module that decide a verdict (``_decides``); what
    builds snippets, pictures and requests is left out."""
    return [
        name
        for name, node in definitions(tree)
        if isinstance(node, ast.FunctionDef) and _decides(node)
    ]


def named(*names: str) -> Callable[[ast.Module], list[str]]:
    """Just these definitions (``f``, ``Class``, ``Class.method``, ``NAME``)."""
    return lambda tree: [name for name, _ in definitions(tree) if name in names]


@dataclass(frozen=True)
class Target:
    """One module, what of it is mutated, and the fast tests that should kill its mutants."""

    module: str
    """Relative to the checkout, POSIX style."""
    tests: tuple[str, ...]
    """pytest's arguments: files or test ids (``-m "not slow"`` is added)."""
    chosen: Callable[[ast.Module], list[str]] = top_level
    timeout: float = 300.0
    """Far beyond a passing run under load: a run that takes longer hangs, and is a kill."""

    @property
    def name(self) -> str:
        return self.module.removeprefix("grader/").removesuffix(".py")

    def mutants(self) -> list[Mutant]:
        return list(_mutants(self))


@functools.cache
def _mutants(target: Target) -> tuple[Mutant, ...]:
    """A target's mutants, made once per process: parsing each takes a while."""
    source = (REPO / target.module).read_text(encoding="utf-8")
    return tuple(definition_mutants(target.module, source, target.chosen(ast.parse(source))))


FAKE_WORKER = ("tests/checks/test_checks_fake_worker.py",)
SANDBOX = ("tests/sandbox/test_sandbox.py",)
IN_USE = "tests/checks/test_in_use.py"
"""The walk and ledger checks on graphs in use, through fake workers on planted engines."""
WALK_HOOKS = "tests/worker/test_walk_hooks.py"
"""A course adapter's walk and ledger (11-785's tape and buffer), graded: the ledger apart
from the walk is checked only there."""
TARGETS = (
    Target("grader/grading/scoring.py", ("tests/grading/test_scoring.py",)),
    Target("grader/grading/completeness.py", ("tests/batch/test_unfinished_grades.py",)),
    Target("grader/batch/ledger.py", ("tests/batch/test_ledger.py", "tests/batch/test_regrade.py")),
    Target("grader/sandbox/policy.py", SANDBOX),
    Target("grader/worker/protocol.py", FAKE_WORKER),
    Target("grader/sandbox/framing.py", SANDBOX, named("body_size", "decode_body")),
    Target("grader/sandbox/process.py", SANDBOX, named("_reply")),
    Target("grader/language/verdicts.py", FAKE_WORKER, named("Tolerance", "mismatch")),
    Target("grader/worker/answers.py", FAKE_WORKER),
    Target("grader/worker/replies.py", FAKE_WORKER),
    Target("grader/checks/accumulation.py", (*FAKE_WORKER, IN_USE, WALK_HOOKS), judges),
    Target("grader/checks/broadcasting.py", FAKE_WORKER, judges),
    Target("grader/checks/differences.py", ("tests/language/test_function_api.py",), judges),
    Target("grader/checks/graphs.py", FAKE_WORKER, judges),
    Target("grader/checks/ops.py", FAKE_WORKER, judges),
    Target("grader/checks/session.py", FAKE_WORKER, judges),
    Target("grader/checks/variables.py", ("tests/checks/test_variables_fake_worker.py",), judges),
    Target(
        "grader/checks/walks.py",
        (
            *FAKE_WORKER,
            IN_USE,
            "tests/language/test_tensor_api.py",
            "tests/checks/test_untouched.py::test_a_walk_changing_the_gradient_it_was_given_fails_the_walk",
        ),
        judges,
    ),
)
"""What decides trust and points, and the tests that should notice when it breaks."""
PENDING: frozenset[str] = frozenset()
"""Modules whose full run has not yet ended with every survivor killed or judged: left out
of ``make test``'s sample until then (docs/audit.md, "Auditing the grader", has their figures)."""


def target_of(mutant: Mutant) -> Target:
    return next(t for t in TARGETS if t.module == mutant.region.file)


def all_mutants(targets: Sequence[Target] = TARGETS) -> list[Mutant]:
    return [mutant for target in targets for mutant in target.mutants()]


# -------------------------------------------------------------------------- the judgements


def key(mutant: Mutant) -> str:
    """How the judgements name a mutant: its file, definition and change, without the line
    number, so a judgement outlives an edit elsewhere in the module (the same change twice
    in one definition is judged once)."""
    return f"{mutant.region.file} {mutant.description.split(' ', 1)[1]}"


def judged() -> dict[str, str]:
    """Survivors a person judged equivalent: ``key`` -> why."""
    return read_judgements(JUDGEMENTS).equivalent


# ------------------------------------------------------------------------------- the runs


@dataclass(frozen=True)
class Run:
    """One mutant's (or a module's baseline) run of its target's tests."""

    outcome: str
    """``survived`` (the tests passed) or ``killed`` (anything else: a test failed, the tests
    could not be collected or configured, or the run hung). The tests pass unmutated (the
    full run checks each module's first), so it is the mutant that made them fail."""
    seconds: float
    output: str
    """The end of pytest's output."""


ZYGOTE = """
import importlib, json, os, sys
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        import pytest
        code = pytest.main(job["args"])
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(int(code))
    print(pid, flush=True)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""
"""Runs each test run in a fork of itself, in the copy, after importing ``PRELOADED``."""
PRELOADED = ("numpy", "hypothesis", "hypothesis.strategies", "pytest", "_pytest.python", "yaml")
PRELOADED += ("rich.console", "jsonschema", "anyio", "torch")
"""What most of a test run's start is spent importing and no mutant changes (the grader and
its tests are imported afresh in each run, from the copy with the mutant in it)."""


PYTEST = ("-x", "-q", "-m", "not slow", "-W", "ignore::pytest.PytestAssertRewriteWarning")
"""Stop at the first failure (a kill), the fast tests only; the preloaded plugins cannot be
rewritten for assertions, and say so."""


class Tester:
    """Runs tests in a private copy of the checkout: each run is a fork of a process that
    has imported ``PRELOADED`` already, which saves most of a run's start."""

    def __init__(self, copy: Path) -> None:
        self.copy = copy
        environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        environment.update(
            PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(copy), OPENBLAS_NUM_THREADS="1"
        )
        self.zygote = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE, *PRELOADED],
            cwd=copy,
            env=environment,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def close(self) -> None:
        assert self.zygote.stdin is not None
        self.zygote.stdin.close()
        self.zygote.wait()

    def _line(self) -> int:
        """The zygote's next line, read a byte at a time: nothing of the next is buffered
        where ``select`` cannot see it."""
        assert self.zygote.stdout is not None
        line = b""
        while not line.endswith(b"\n"):
            byte = os.read(self.zygote.stdout.fileno(), 1)
            if not byte:
                raise RuntimeError("the self-audit's test runner died")
            line += byte
        return int(line)

    def _pytest(self, arguments: list[str], timeout: float) -> int | None:
        """pytest's exit code, or None when the run outlived ``timeout`` (and was killed)."""
        assert self.zygote.stdin is not None
        job = {"args": arguments, "log": str(self.copy / "self-audit.log")}
        self.zygote.stdin.write((json.dumps(job) + "\n").encode())
        self.zygote.stdin.flush()
        pid = self._line()
        ready, _, _ = select.select([self.zygote.stdout], [], [], timeout)
        if not ready:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        code = self._line()
        return code if ready else None

    def run(self, target: Target, mutant: Mutant | None = None) -> Run:
        """``target``'s tests, with ``mutant``'s file written in for the run."""
        path = self.copy / target.module
        original = path.read_text(encoding="utf-8")
        if mutant is not None:
            path.write_text(mutant.files[target.module], encoding="utf-8")
        start = time.monotonic()
        try:
            code = self._pytest([*PYTEST, *target.tests], target.timeout)
        finally:
            path.write_text(original, encoding="utf-8")
        seconds = time.monotonic() - start
        if code is None:
            return Run(KILLED, seconds, f"timed out after {target.timeout:g} s")
        outcome = SURVIVED if code == 0 else KILLED
        output = (self.copy / "self-audit.log").read_text(errors="replace").strip()
        return Run(outcome, seconds, "\n".join(output.splitlines()[-15:]))


@contextmanager
def testers(count: int) -> Iterator[queue.Queue[Tester]]:
    """``count`` testers, each in a private copy of the checkout, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="self-audit-") as folder:
        os.chmod(folder, 0o755)  # as the checkout: a worker's own uid reads the grader there
        made: list[Tester] = []
        try:
            for index in range(count):
                copy = Path(folder) / f"checkout-{index}"
                shutil.copytree(REPO, copy, ignore=NOT_COPIED)
                made.append(Tester(copy))
            available: queue.Queue[Tester] = queue.Queue()
            for tester in made:
                available.put(tester)
            yield available
        finally:
            for tester in made:
                tester.close()


def run_all(
    mutants: Sequence[Mutant], jobs: int = 1, report: Callable[[Mutant, Run], None] | None = None
) -> dict[str, Run]:
    """Each mutant's run (by id), ``jobs`` at a time, each in a copy of its own."""

    def one(mutant: Mutant) -> Run:
        tester = available.get()
        try:
            run = tester.run(target_of(mutant), mutant)
        finally:
            available.put(tester)
        if report is not None:
            report(mutant, run)
        return run

    with testers(jobs) as available, ThreadPoolExecutor(jobs) as pool:
        return dict(zip((m.id for m in mutants), pool.map(one, mutants), strict=True))


def diff(mutant: Mutant) -> str:
    """The mutant's change as a unified diff of its module."""
    relative = mutant.region.file
    before = (REPO / relative).read_text(encoding="utf-8").splitlines(keepends=True)
    after = mutant.files[relative].splitlines(keepends=True)
    return "".join(difflib.unified_diff(before, after, f"a/{relative}", f"b/{relative}", n=2))


def explain(mutant: Mutant) -> str:
    """A survivor nobody judged: where, what, and how to kill or judge it."""
    target = target_of(mutant)
    return (
        f"{mutant.region.file}:{mutant.line} ({mutant.region.function}) {mutant.operator}: "
        f"survived {' '.join(target.tests)}\n{diff(mutant)}"
        f"Kill it with a test in {' or '.join(target.tests)} (preferred), or, if it behaves "
        f"as the original wherever it matters, judge it in {JUDGEMENTS.relative_to(REPO)}:\n"
        f"equivalent:\n  {key(mutant)!r}: 'why it behaves the same'\n"
    )


# ------------------------------------------------------------------------------- the command


def main(argv: Sequence[str] | None = None) -> int:
    """The full run (or ``--module``'s part of it): the figures per module and every unjudged
    survivor; exit status 1 when there is one, or when a baseline fails."""
    parser = argparse.ArgumentParser(prog="python -m tests.self_audit", description=__doc__)
    parser.add_argument(
        "--module", action="append", choices=[t.name for t in TARGETS], help="repeatable"
    )
    parser.add_argument(
        "--mutant", action="append", metavar="ID", help="only these mutants (repeatable)"
    )
    parser.add_argument("-j", "--jobs", type=int, default=1)
    options = parser.parse_args(argv)
    targets = [t for t in TARGETS if options.module is None or t.name in options.module]
    if options.mutant:
        targets = [t for t in targets if any(m.id in options.mutant for m in t.mutants())]
    with testers(1) as available:
        tester = available.get()
        for target in targets:
            baseline = tester.run(target)
            if baseline.outcome != SURVIVED:
                print(f"{target.name}: its tests fail unmutated:\n{baseline.output}")
                return 1
    mutants = [m for m in all_mutants(targets) if not options.mutant or m.id in options.mutant]
    equivalent = judged()
    print(f"{len(mutants)} mutants of {len(targets)} modules, -j {options.jobs}", flush=True)

    def progress(mutant: Mutant, run: Run) -> None:
        print(f"{run.outcome:8} {run.seconds:6.1f} s  {mutant.id}", flush=True)

    runs = run_all(mutants, options.jobs, progress)
    unjudged = [m for m in mutants if runs[m.id].outcome == SURVIVED and key(m) not in equivalent]
    stale = [m for m in mutants if runs[m.id].outcome != SURVIVED and key(m) in equivalent]
    print(f"\n{'module':28} mutants  killed  equivalent  unjudged")
    for target in targets:
        mine = [m for m in mutants if m.region.file == target.module]
        outcomes = [runs[m.id].outcome for m in mine]
        survivors = [m for m in mine if runs[m.id].outcome == SURVIVED]
        same = sum(key(m) in equivalent for m in survivors)
        print(
            f"{target.name:28} {len(mine):7d} {outcomes.count(KILLED):7d} {same:11d} "
            f"{len(survivors) - same:9d}"
        )
    for mutant in unjudged:
        print(f"\nUNJUDGED SURVIVOR {mutant.id}\n{explain(mutant)}")
    for mutant in stale:
        print(f"\nJUDGED EQUIVALENT BUT KILLED (drop the judgement): {key(mutant)!r}")
    return 1 if unjudged or stale else 0


if __name__ == "__main__":
    sys.exit(main())
