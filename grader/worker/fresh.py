"""Snippets run as a student runs them, each run in an interpreter that never saw their code.

Runs inside the sandbox (``python -I -m grader.worker.fresh``). Each request is one run: a list
of examples (snippet sources) executed one after another in one namespace, exactly as their
concatenation would run as a script. The process forks for every run before any of the
submission is imported, so module-level state, caches and mutable defaults start afresh each
time, and a hang is killed at the run's deadline (CPU time: load never decides it). What each
example printed comes back as text; nothing here judges, and the trusted parent reads nothing
of it but numbers (``grader.checks.fresh``).

A run may ``keep`` what each example leaves behind: then nothing an earlier example made is
freed (its names are held, the cycle collector is off), so no later object can take an
earlier one's memory, and so its ``id``. A failure that goes away when kept needed earlier
objects freed: whether a student's interpreter reuses their ids is luck of its allocator.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import math
import os
import resource
import select
import signal
import sys
import time
import types
from collections.abc import Iterable
from typing import Any

from grader.sandbox import framing
from grader.worker.confine import MAX_MESSAGE, confine_imports

MAX_PRINTED = 16 * 1024
"""Characters of one example's printed text sent back."""


def execute(sources: list[str], keep: bool = False) -> dict[str, Any]:
    """Run the examples in one namespace: what each printed, and the exception (its type and
    message) that stopped one, if any. ``keep``: every example's objects outlive the run."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    printed: list[str] = []
    kept: list[dict[str, Any]] = []
    if keep:
        gc.disable()
    for number, source in enumerate(sources):
        if keep:
            kept.append(dict(namespace))  # what the examples before left bound is never freed
        buffer = io.StringIO()
        try:
            with contextlib.redirect_stdout(buffer):
                exec(compile(source, f"<example {number}>", "exec"), namespace)  # noqa: S102
        except BaseException as exc:  # noqa: BLE001 - SystemExit, RecursionError, all of it
            printed.append(buffer.getvalue()[:MAX_PRINTED])
            return {"printed": printed, "raised": f"{type(exc).__name__}: {exc}"[:MAX_MESSAGE]}
        printed.append(buffer.getvalue()[:MAX_PRINTED])
    return {"printed": printed, "raised": None}


def _collect(read: int, deadline: float) -> bytes | None:
    """The child's whole frame, or None when the deadline passes first."""
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([read], [], [], left)[0]:
            return None
        chunk = os.read(read, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def run(
    sources: list[str], seconds: float, keep: bool = False, root: str | None = None
) -> dict[str, Any]:
    """One run in a forked child (``execute``): its answer, or ``{"timeout": True}`` /
    ``{"crashed": True}``. ``seconds`` is CPU time, so a loaded machine changes no run's
    outcome (and so no feedback); a run that waits without computing is stopped at
    ``WALL_BACKSTOP`` times that on the wall clock. ``root``: the child first forgets every
    module loaded from that folder and puts it first on ``sys.path`` (a trusted process that
    has the reference loaded runs a snippet against it as a fresh interpreter would)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child reaches nothing of the parent's but its own pipe: no channel,
        # no other descriptor. Written here, not as a function of its own, so that nothing
        # but a fork closes them
        os.closerange(3, write)
        os.closerange(write + 1, os.sysconf("SC_OPEN_MAX"))
        try:
            if root is not None:
                _fresh_from(root)
            _limit_cpu(seconds)
            framing.write_frame(write, execute(sources, keep))
        finally:
            os._exit(0)
    os.close(write)
    try:
        data = _collect(read, time.monotonic() + seconds * WALL_BACKSTOP)
    finally:
        os.close(read)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    out_of_cpu = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU
    if data is None or (out_of_cpu and not data):
        return {"timeout": True}
    try:
        return framing.decode_body(data[framing.HEADER.size :])  # type: ignore[return-value]
    except framing.FrameError:
        return {"crashed": True}


def _fresh_from(root: str) -> None:
    """No module of ``root`` loaded, and ``root`` first on ``sys.path``, as
    ``confine_imports`` leaves a worker."""
    places = {root, os.path.abspath(root), os.path.realpath(root)}
    prefixes = tuple(os.path.join(place, "") for place in places)
    for name, module in list(sys.modules.items()):
        if _loaded_from(module, places, prefixes):
            del sys.modules[name]
    sys.path.insert(0, os.path.realpath(root))


def _loaded_from(module: object, places: set[str], prefixes: tuple[str, ...]) -> bool:
    """Whether ``module`` was loaded from one of ``places``. Read from the module's own
    namespace: ``sys.modules`` also holds objects that are no module (PyTorch puts namespaces
    there whose every attribute is another namespace) and modules whose ``__getattr__`` would
    import something; neither was loaded from a folder."""
    if not isinstance(module, types.ModuleType):
        return False
    own = vars(module)
    path = own.get("__path__")
    found = [own.get("__file__"), *(path if isinstance(path, Iterable) else ())]
    return any(isinstance(f, str) and (f in places or f.startswith(prefixes)) for f in found)


WALL_BACKSTOP = 5.0
"""A run's wall-clock limit, in multiples of its CPU seconds."""


def _limit_cpu(seconds: float) -> None:
    """The child's CPU time capped at ``seconds`` (SIGXCPU ends it), never above the cap the
    sandbox set."""
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    cap = max(1, math.ceil(seconds))
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (cap, hard))


def preload(names: list[str]) -> None:
    """Import the modules named (numpy, for a tensor engine): before the submission can shadow
    them and once for all runs (a zygote, ``grader.sandbox.zygote``, does it once for all its
    workers); nothing else of the grader's is."""
    for name in names:
        importlib.import_module(name)


def main() -> None:
    """``python -I -m grader.worker.fresh [MODULE ...]``: the modules named are imported first
    (``preload``)."""
    preload(sys.argv[1:])
    confine_imports()
    while True:
        try:
            request = framing.read_frame(framing.REQUEST_FD)
        except framing.FrameError:
            return
        framing.write_frame(
            framing.REPLY_FD,
            run(request["sources"], request["seconds"], request.get("keep") is True),
        )


if __name__ == "__main__":
    main()
