"""numpy's BLAS keeps to one thread in every process of a grade (``grader.ONE_THREAD``): a pool
of a thread per core spins at every numpy import, for CPU a grade never used."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

from grader import ONE_THREAD
from grader.layout import PACKAGE
from grader.run.prestart import grading_environment
from grader.sandbox.policy import Policy

THREADS = "import os, numpy; print(len(os.listdir('/proc/self/task')))"


def threads_after_importing_numpy(first: str) -> int:
    """Threads of a fresh interpreter that imported ``first``, then numpy, with no pool size in
    its environment."""
    env = {k: v for k, v in os.environ.items() if k not in ONE_THREAD}
    run = subprocess.run(
        [sys.executable, "-c", f"{first}\n{THREADS}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return int(run.stdout)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="threads are counted in /proc")
def test_a_process_that_imports_the_grader_starts_no_blas_pool():
    if threads_after_importing_numpy("pass") == 1:  # one core, or a BLAS without a pool
        pytest.skip("numpy starts no thread pool on this machine: nothing to keep to one")
    assert threads_after_importing_numpy("import grader") == 1


def test_grading_processes_and_workers_get_one_thread_whatever_the_user_set(monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "8")
    assert grading_environment().items() >= ONE_THREAD.items()
    assert dict(Policy().environment).items() >= ONE_THREAD.items()


def test_the_grader_parses_python_one_thread_at_a_time():
    """CPython 3.11's ``ast.parse`` is not safe between threads (``grader.language.parsing``):
    every module of the grader parses through its lock, but the leak probe, a program alone."""
    alone = {PACKAGE / "language" / "parsing.py", PACKAGE / "release" / "leak_probe.py"}
    calls = sorted(
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in PACKAGE.rglob("*.py")
        if path not in alone
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "parse"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "ast"
    )
    assert not calls, calls
