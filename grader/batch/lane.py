"""A batch lane's trusted side: a long-lived process that forks one grading run per request.

Starting Python and importing pytest, Hypothesis and numpy costs about as much as grading a
correct submission. A lane pays it once: each grading run is a fork of the warmed-up lane, a
fresh process with memory of its own as a pytest subprocess has, which runs pytest in-process
and exits. The student's code still runs only in the sandboxed worker the run starts.

The examples a run records for replay (``grader.grading.replay``) come back to the lane over a
pipe and stay in its memory; the batch passes them on to its other lanes, so every later
submission replays them, secret seed or not: they are never written to disk. So do the reference
oracle's answers a run worked out (``grader.oracles.reference.KNOWN``): the lane's next runs
take them instead of evaluating the same examples on the reference again. So do the sandbox's
probes (``grader.sandbox.sandbox``): the lane's next runs start their workers without asking
again whether bubblewrap and the interpreter work under the same policy. So do the warm
zygotes that fork sandboxed workers (``grader.sandbox.sharing``): the lane starts, in its main
thread, the one its runs' probes' worker will ask for as it warms up (``_zygote_ahead``), and
any other a run asks for when it does; every later run's workers are forked by it; between
two uploads the lane clears it of what the last left.

Protocol (the batch's ``Lanes`` and ``python -I -m grader.batch.lane``): one JSON request
per line on stdin, ``{"id": n, "args": [pytest arguments], "cwd": folder, "recordings": {key:
text}}`` (recordings other lanes made); one JSON reply per line on stdout, ``{"id": n,
"returncode": n, "recordings": {key: text}, "answers": n}`` (the recordings this run made, and
how many reference answers the lane holds). The run's output is in
``cwd/pytest.out``. A reply whose ``id`` is not the request's is some other run's, whose
results file may not exist yet or may be half of another grade: the lane is replaced.

A single grade warms up the same way, once (``python -I -m grader.batch.lane --once``,
``api.in_one_process``): a JSON list of runs on stdin, ``[{"args": [...], "cwd": folder,
"output": file}]``, forked all at once (one per assignment, so both cores work); the list of
their exit codes on stdout.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import itertools
import json
import os
import queue
import socket
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from grader.checks import launcher
from grader.grading import replay, rubric, strata
from grader.layout import DEFAULT_PROFILE, DEFAULT_RUBRIC, grader_digest
from grader.oracles import OracleUnavailable, reference, torch_oracle
from grader.run.api import GradeOptions, given_reference, in_subprocess, pytest_words
from grader.run.prestart import grading_environment, sandbox_of
from grader.sandbox import sandbox, sharing
from grader.sandbox.launch import Limits

OUTPUT = "pytest.out"


def _fork(
    args: list[str], cwd: str, output: str = OUTPUT, answers: bool = True
) -> tuple[int, int, socket.socket]:
    """Fork; the child runs pytest on ``args`` in ``cwd``, its output in ``cwd/output``, and
    hands back what it recorded, whether it had to import PyTorch (an oracle there), the
    sandbox's probes that worked (``sandbox.settled_probes``) and, with ``answers``, the
    reference's answers it worked out (a lane keeps them; a single grade's
    process exits after its runs, so its forks send none): the child's pid, the pipe to read
    that from (``_runs``), opened here, so that nothing else closes a descriptor it was
    handed, and the link on which it asks the lane for zygotes (``sharing.Lane``)."""
    readable, writable = os.pipe()
    ours, theirs = sharing.Lane.link()
    pid = os.fork()
    if pid == 0:  # the grading run
        code = 3
        try:
            os.close(readable)
            ours.close()
            sharing.use_lane(theirs)
            os.chdir(cwd)
            out = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(out, 1)
            os.dup2(out, 2)
            code = int(pytest.main(args))
            with os.fdopen(writable, "w") as pipe:
                found = {
                    "recordings": replay.FRESH,
                    "reference": reference.FOUND if answers else {},
                    "probes": sandbox.settled_probes(),
                }
                json.dump({**found, "torch": "torch" in sys.modules}, pipe)
        finally:
            with contextlib.suppress(Exception):  # os._exit flushes nothing by itself
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    os.close(writable)
    theirs.close()
    return pid, readable, ours


def _runs(
    forks: list[tuple[int, int, socket.socket]], zygotes: sharing.Lane
) -> list[tuple[int, dict[str, str], bool]]:
    """Each forked run's exit code, what it recorded, and whether it imported PyTorch; their
    requests for zygotes answered meanwhile, in this, the lane's main thread."""
    carried = zygotes.serve([link for _, _, link in forks], [pipe for _, pipe, _ in forks])
    done = []
    for (pid, pipe, link), found in zip(forks, carried, strict=True):
        os.close(pipe)
        link.close()
        done.append(_collect(pid, found))
    return done


def _collect(pid: int, found: bytes) -> tuple[int, dict[str, str], bool]:
    """A forked run's exit code, what it recorded, and whether it imported PyTorch."""
    _, status = os.waitpid(pid, 0)
    try:
        reply = json.loads(found)
        recorded = {str(k): str(v) for k, v in reply["recordings"].items()}
        needed_torch = reply["torch"] is True
        answers = reply["reference"]
        probes = reply["probes"]
    except (ValueError, AttributeError, KeyError, TypeError):
        recorded, needed_torch, answers, probes = {}, False, {}, []
    replay.MEMORY.update(recorded)
    reference.learn(answers, decode=True)  # once here, not in each fork
    sandbox.learn_probes(probes)
    return os.waitstatus_to_exitcode(status), recorded, needed_torch


def _warm_up() -> None:
    """Import what every grading run imports, once, before the forks: the grading suites too (a
    fork applies the run's settings to its own copy of them), with their explicit examples for
    this course where it is installed (``strata.build_ahead``), and compute the digest of the
    grader's source that keys every recording. pytest's own plugins too, and the debugger its
    debugging plugin imports at every configure (``pdb``, with ``readline``): pytest imports
    them as it starts each run, 7 ms of every fork's CPU."""
    import pdb  # noqa: F401

    import hypothesis.extra.pytestplugin  # noqa: F401 - imported once, for every fork
    from _pytest.config import default_plugins

    import grader.grading.plugin  # noqa: F401
    from grader.grading.suites import test_babygrad, test_micrograd, test_scalar_functions

    for name in default_plugins:
        importlib.import_module(f"_pytest.{name}")

    if DEFAULT_PROFILE.is_file():  # an install of another course alone ships none
        strata.build_ahead([test_babygrad, test_micrograd, test_scalar_functions])
    with contextlib.suppress(rubric.RubricError):  # a fork says what is wrong
        rubric.load(DEFAULT_RUBRIC)  # read and validated once: the forks take it (yamlfiles)
    grader_digest()
    sandbox.bwrap_status()  # whether bubblewrap works here: each fork would probe it again
    gc.freeze()  # the warm heap is the forks' too: their collections need not scan it


def _zygote_ahead(zygotes: sharing.Lane, sandbox_mode: str) -> None:
    """Before the warm-up, in the main thread (the sandbox dies with it): start the zygote the
    runs' probes' worker will ask for under the default grading options and ``sandbox_mode``
    (the lane's ``--sandbox``), where one would fork it (``launcher.zygote_ahead``). It
    imports while the lane warms up and forks, so the first worker is forked from a ready
    zygote; a run of other options asks for its own, as before."""
    if sandbox_mode not in sandbox.MODES:
        return
    options = GradeOptions(Path.cwd(), sandbox=sandbox_mode)  # no upload yet: any folder
    settings = SimpleNamespace(
        submission=options.submission,
        reference_dir=given_reference(options.reference),
        slot=options.slot,
        limits=Limits(memory_mb=options.memory_mb),
        sandbox=options.sandbox,
    )
    launcher.zygote_ahead(zygotes, settings)


def serve_once(sandbox_mode: str) -> None:
    """A grade's one grading process (``api.in_one_process``): warm up once, then read the
    runs (it may be started before they are known: ``grader.run.prestart``), one fork
    per assignment, all at once, each with its output file; their exit codes on stdout."""
    zygotes = sharing.Lane()
    try:
        _zygote_ahead(zygotes, sandbox_mode)
        _warm_up()
        text = sys.stdin.read()
        if not text:  # started ahead of a grade that stopped before it had runs
            return
        runs = json.loads(text)
        forks = [_fork(run["args"], run["cwd"], run["output"], answers=False) for run in runs]
        print(json.dumps([done[0] for done in _runs(forks, zygotes)]), flush=True)
    finally:
        zygotes.close()


def serve(sandbox_mode: str) -> None:
    """The lane process: warm up, then one forked grading run per request. Once a run has had
    to import PyTorch, the lane imports it too, so the runs after it fork with it loaded."""
    zygotes = sharing.Lane()
    try:
        _zygote_ahead(zygotes, sandbox_mode)
        _warm_up()
        for line in sys.stdin:
            request = json.loads(line)
            replay.MEMORY.update(request["recordings"])
            fork = _fork(request["args"], request["cwd"])
            ((returncode, recorded, needed_torch),) = _runs([fork], zygotes)
            if needed_torch and "torch" not in sys.modules:  # once: it costs more than a grade
                with contextlib.suppress(OracleUnavailable):
                    torch_oracle.load()
            reply = {"id": request["id"], "returncode": returncode, "recordings": recorded}
            print(json.dumps({**reply, "answers": len(reference.KNOWN)}), flush=True)
            zygotes.clear()  # of this upload's leftovers, while the batch reads the reply
    finally:
        zygotes.close()


class Lane:
    """The batch's handle on one lane process: runs grading commands as ``api.in_subprocess``
    does, in a fork of the warm lane. A lane that dies is replaced; that run falls back to a
    fresh subprocess, so no submission's grade is lost to it."""

    def __init__(self, sandbox: str = "auto") -> None:
        self._sandbox = sandbox
        """The runs' sandbox (``--sandbox``): a zygote is started ahead only where they use one."""
        self._process = self._start()
        self.known: set[str] = set()
        """The recordings (keys) the lane process holds in memory."""
        self.answers = 0
        """How many of the reference oracle's answers the lane process holds."""
        self._requests = itertools.count()

    def _start(self) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-I", "-m", "grader.batch.lane", "--sandbox", self._sandbox],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=grading_environment(),
            text=True,
        )

    def run(
        self, command: list[str], workdir: Path, missing: dict[str, str]
    ) -> tuple[int, str, dict[str, str]]:
        """Run ``command`` in a fork of the lane, handing it the recordings it lacks: exit
        code, output, and what the run recorded."""
        args = pytest_words(command)
        request = next(self._requests)
        requests, replies = self._process.stdin, self._process.stdout
        try:
            requests.write(
                json.dumps(
                    {"id": request, "args": args, "cwd": str(workdir), "recordings": missing}
                )
                + "\n"
            )
            requests.flush()
            reply = json.loads(replies.readline())
            if not isinstance(reply, dict) or reply.get("id") != request:
                raise ValueError(f"a reply to another request than {request}")
        except (OSError, ValueError):
            self.close()
            self._process, self.known = self._start(), set()
            return (*in_subprocess(command, workdir), {})
        self.known |= missing.keys() | reply["recordings"].keys()
        self.answers = reply["answers"]
        output = workdir / OUTPUT
        text = output.read_text(errors="replace") if output.exists() else ""
        return reply["returncode"], text, reply["recordings"]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self._process.stdin is not None:
                self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


class Lanes:
    """A pool of warm lanes shared by a batch's threads (an ``api.Runner``): a grading command
    takes a free lane; what one lane records, every lane is given before its next run."""

    def __init__(self, count: int, sandbox: str = "auto") -> None:
        self._free: queue.Queue[Lane] = queue.Queue()
        self._all = [Lane(sandbox) for _ in range(count)]
        for lane in self._all:
            self._free.put(lane)
        self._shared: dict[str, str] = {}
        self._lock = threading.Lock()

    def __call__(self, command: list[str], workdir: Path) -> tuple[int, str]:
        lane = self._free.get()
        try:
            with self._lock:
                missing = {k: v for k, v in self._shared.items() if k not in lane.known}
            returncode, output, recorded = lane.run(command, workdir, missing)
            with self._lock:
                self._shared.update(recorded)
            return returncode, output
        finally:
            self._free.put(lane)

    def __enter__(self) -> Lanes:
        return self

    def __exit__(self, *exc: object) -> None:
        for lane in self._all:
            lane.close()


if __name__ == "__main__":
    words = sys.argv[1:]  # [--once] [--sandbox MODE]: the runs' sandbox, for _zygote_ahead
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C in a batch: the batch says so
        (serve_once if "--once" in words else serve)(sandbox_of(words))
