"""Start, talk to, time and kill the sandboxed worker: the trusted parent's side.

``sandbox.py`` decides how the worker is confined; ``process.py`` runs one worker process (its
channel and deadlines); this module keeps a ``Worker`` serving across failures.

Failures
    On a timeout, a death or a bad frame the whole process tree is killed and ``WorkerFailure``
    is raised. The next request starts a fresh worker, with a fresh scratch directory,
    transparently. A worker found dead *between* requests (before the next one is sent) is
    replaced silently.

Not thread-safe for concurrent requests on one ``Worker`` (a lock serialises them); use one
Worker (and one slot) per parallel lane. Start each Worker's first request from a thread that
outlives it: the sandbox is tied to the thread that forked it (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import math
import os
import re
import signal
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path

from grader.sandbox import framing, sharing
from grader.sandbox.policy import DEFAULT_LIMITS, Limits, Policy
from grader.sandbox.process import Generation, Trouble
from grader.sandbox.proctree import tree_cpu_seconds
from grader.sandbox.sandbox import (
    Confinement,
    SandboxUnavailable,
    SlotBusy,
    SlotLock,
    confine,
    sweep_uid,
    uid_for_slot,
)
from grader.sandbox.warm import Zygote

__all__ = [
    "Limits",
    "SandboxUnavailable",
    "SlotBusy",
    "Worker",
    "WorkerFailure",
    "worker_in_free_slot",
]


class WorkerFailure(Exception):
    """The worker timed out, died or broke the protocol. It has been killed already.

    ``kind``: ``"timeout"`` | ``"crashed"`` | ``"invalid"``; ``detail``: one line for a
    student; ``output``: the excerpt of what that worker printed (as ``output_excerpt()``).
    """

    def __init__(self, kind: str, detail: str, output: str = "") -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.output = output

    def __reduce__(self) -> tuple:  # picklable, e.g. across a process pool
        return type(self), (self.kind, self.detail, self.output)


_MEMORY_SIGNS = re.compile(
    r"MemoryError|Cannot allocate memory|std::bad_alloc|out of memory", re.IGNORECASE
)


def _death_detail(status: tuple[int | None, int | None], last_output: str, policy: Policy) -> str:
    """One line for a student on why a worker with exit ``status`` (signal, code) died."""
    sig, code = status
    limits = policy.limits
    if _MEMORY_SIGNS.search(last_output):
        return f"exceeded the memory limit ({limits.memory_mb} MB)"
    if sig == signal.SIGXFSZ:
        return f"exceeded the file size limit ({limits.file_size_mb} MB)"
    if sig == signal.SIGXCPU:
        return f"exceeded the hard CPU time limit ({policy.cpu_cap_s} s)"
    if sig is not None:
        try:
            name = (signal.strsignal(sig) or signal.Signals(sig).name).lower()
        except ValueError:
            name = "unknown signal"
        extra = ", possibly by the out-of-memory killer" if sig == signal.SIGKILL else ""
        return f"crashed (killed by signal {sig}: {name}{extra})"
    if code == 0:
        return "exited (exit code 0) without replying"
    return f"crashed (exit code {code})"


class _Resources:
    """What must be released even if the Worker is dropped without close()."""

    def __init__(self, slot_lock: SlotLock | None) -> None:
        self.slot_lock = slot_lock
        self.generation: Generation | None = None
        self.zygotes: list[Zygote] = []

    def zygote(self, confinement: Confinement, argv: Sequence[str]) -> Zygote | None:
        """The zygote to fork the next worker (``sharing.zygote_for``), held until release."""
        zygote = sharing.zygote_for(confinement, argv)
        if zygote in self.zygotes:
            sharing.release(zygote)  # held already
        elif zygote is not None:
            self.zygotes.append(zygote)
        return zygote

    def release(self) -> None:
        generation, self.generation = self.generation, None
        zygotes, self.zygotes = self.zygotes, []
        try:
            if generation is not None:
                generation.finish()
            for zygote in zygotes:
                sharing.release(zygote)
        finally:
            if self.slot_lock is not None:
                self.slot_lock.release()
                self.slot_lock = None


class Worker:
    """A sandboxed worker process, started lazily and restarted after every failure.

    ``argv`` runs inside (e.g. ``[sys.executable, "-I", "-m", "grader.worker.runner"]``) with
    cwd = a fresh scratch directory holding a copy of ``submission`` (``GRADER_SUBMISSION``);
    ``readable`` paths are visible read-only, ``hidden`` ones are masked even under a readable
    path (bwrap) or only listed in ``GRADER_HIDDEN`` (fallback). ``sandbox``: "auto", "bwrap"
    (``SandboxUnavailable`` if it does not work here) or "none". ``slot``: which worker uid
    (``BASE_UID + slot``) when running as root; parallel Workers need distinct slots
    (``SlotBusy`` otherwise).
    """

    def __init__(
        self,
        argv: Sequence[str | os.PathLike[str]],
        *,
        submission: str | os.PathLike[str],
        readable: Sequence[str | os.PathLike[str]],
        hidden: Sequence[str | os.PathLike[str]],
        limits: Limits = DEFAULT_LIMITS,
        sandbox: str = "auto",
        slot: int = 0,
    ) -> None:
        self._argv = [os.fspath(a) for a in argv]
        self._submission = Path(submission).resolve()
        if not self._submission.exists():
            raise FileNotFoundError(f"submission {self._submission} does not exist")
        self.limits = limits
        self.slot = slot
        slot_lock = None
        if os.geteuid() == 0:
            uid = uid_for_slot(slot)
            slot_lock = SlotLock(uid)
            sweep_uid(uid)  # leftovers of an earlier run that died without cleaning up
        try:
            self._confinement = confine(
                self._argv,
                readable=readable,
                hidden=hidden,
                limits=limits,
                sandbox=sandbox,
                slot=slot,
            )
        except BaseException:
            if slot_lock is not None:
                slot_lock.release()
            raise
        if slot_lock is not None and self._confinement.policy.uid is None:
            slot_lock.release()  # no process will run as that uid
            slot_lock = None
        self.protections: list[str] = list(self._confinement.protections)
        self._resources = _Resources(slot_lock)
        self._finalizer = weakref.finalize(self, self._resources.release)
        self._lock = threading.Lock()
        self._closed = False
        self._last_excerpt = ""

    # ---- introspection

    @property
    def mode(self) -> str:
        """The sandbox actually in use: "bwrap" or "none"."""
        return self._confinement.mode

    @property
    def confinement(self) -> Confinement:
        """How it runs: with ``argv``, what its zygote, where one forks it, is keyed by
        (``sharing``)."""
        return self._confinement

    @property
    def argv(self) -> list[str]:
        """What runs inside."""
        return list(self._argv)

    @property
    def uid(self) -> int | None:
        """The worker's own uid, or None when it runs as the grader's uid."""
        return self._confinement.policy.uid

    @property
    def running(self) -> bool:
        generation = self._resources.generation
        return generation is not None and generation.proc.poll() is None

    def cpu_seconds(self) -> float:
        """CPU time the running worker's process tree has used (0.0 when none runs): what a
        budget spanning many requests should count, since it does not depend on machine load."""
        generation = self._resources.generation
        return tree_cpu_seconds(generation.proc.pid) if self.running and generation else 0.0

    def __repr__(self) -> str:
        return (
            f"Worker({self._argv!r}, mode={self.mode!r}, uid={self.uid}, "
            f"running={self.running}, closed={self._closed})"
        )

    # ---- the interface

    def start(self) -> None:
        """Start the worker now rather than on the first request (to keep start-up out of it):
        where workers are forked, its zygote, which warms up meanwhile; the fork, which costs
        little, waits for the first request."""
        with self._lock:
            self._check_open()
            if self._resources.zygote(self._confinement, self._argv) is None:
                self._current()

    def request(self, message: dict, cpu_budget_s: float) -> object:
        """Send one frame and return the reply frame, or raise ``WorkerFailure``."""
        if (
            isinstance(cpu_budget_s, bool)
            or not isinstance(cpu_budget_s, (int, float))
            or not math.isfinite(cpu_budget_s)
            or cpu_budget_s <= 0
        ):
            raise ValueError(f"cpu_budget_s must be a positive number, got {cpu_budget_s!r}")
        data = framing.encode(message)
        with self._lock:
            self._check_open()
            generation = self._current()
            try:
                return generation.exchange(data, float(cpu_budget_s), self.limits.wall_factor)
            except Trouble as trouble:
                raise self._fail(generation, trouble) from None

    def output_excerpt(self) -> str:
        """Bounded, sanitized head and tail of what the current (or last) worker printed."""
        generation = self._resources.generation
        return generation.output.excerpt() if generation is not None else self._last_excerpt

    def close(self) -> None:
        """Kill everything, remove the scratch directory, free the slot. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            generation = self._resources.generation
            if generation is not None:
                generation.finish()
                self._last_excerpt = generation.output.excerpt()
            self._finalizer()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- internals

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this Worker is closed")

    def _current(self) -> Generation:
        generation = self._resources.generation
        if generation is not None:
            state = generation.idle_state()
            if state == "ok":
                return generation
            if state == "unsolicited":
                raise self._fail(
                    generation, Trouble("invalid", "wrote to its reply channel without being asked")
                )
            if state == "closed":
                raise self._fail(generation, Trouble("invalid", "closed its reply channel"))
            self._retire(generation)  # died between requests: replace it quietly
        zygote = self._resources.zygote(self._confinement, self._argv)
        generation = Generation(self._confinement, self._argv, self._submission, self.slot, zygote)
        self._resources.generation = generation
        return generation

    def _retire(self, generation: Generation) -> None:
        generation.finish()
        self._last_excerpt = generation.output.excerpt()
        if self._resources.generation is generation:
            self._resources.generation = None

    def _fail(self, generation: Generation, trouble: Trouble) -> WorkerFailure:
        kind, detail = trouble.kind, trouble.detail
        status = generation.exit_status() if kind == "died" else None
        if kind == "died" and status is None:  # the channel broke, yet the worker lives on
            kind, detail = "invalid", detail or "closed its reply channel"
        self._retire(generation)  # kills the tree and collects the last of its output
        if status is not None:
            kind = "crashed"
            detail = _death_detail(
                status, generation.output.last_text(4096), self._confinement.policy
            )
        return WorkerFailure(kind, detail, self._last_excerpt)


SLOTS_TO_TRY = 64


def worker_in_free_slot(
    argv: Sequence[str | os.PathLike[str]], *, first_slot: int = 0, **options: object
) -> Worker:
    """A ``Worker`` on the first slot from ``first_slot`` that no other live Worker holds, so
    concurrent grading runs (tests, a batch, two terminals) never need to coordinate."""
    for slot in range(first_slot, first_slot + SLOTS_TO_TRY):
        try:
            return Worker(argv, slot=slot, **options)  # type: ignore[arg-type]
        except SlotBusy:
            continue
    raise SlotBusy(f"no free worker slot in {first_slot}..{first_slot + SLOTS_TO_TRY - 1}")
