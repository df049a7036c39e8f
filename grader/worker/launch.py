"""Start, talk to, time and kill the sandboxed worker: the trusted parent's side.

``sandbox.py`` decides how the worker is confined; this module runs it.

Channel
    Two pipes: the worker reads length-prefixed JSON requests (``framing``) on
    ``framing.REQUEST_FD`` and writes one reply per request on ``framing.REPLY_FD``. Its stdin
    is /dev/null; stdout and stderr share one pipe that a thread drains continuously (the
    worker never blocks on output), keeping only the first quarter and the last three quarters
    of ``Limits.output_cap_bytes``.

Deadlines
    A request is charged the CPU time of the worker's whole process tree, read from /proc only
    when the answer does not come back within ``CPU_POLL_GRACE_S`` (a quick request never
    touches /proc, so load on the machine cannot turn it into a timeout). The baseline is taken
    at that first poll, so a request may overrun its budget by at most the grace period, never
    time out early. A wall-clock backstop (``budget * wall_factor + WALL_GRACE_S``) catches a
    worker that is blocked or sleeping. Reads and writes are non-blocking under ``poll``: a
    worker that writes half a frame and stalls still meets the deadline.

Failures
    On a timeout, a death or a bad frame the whole process tree is killed (bwrap: the sandbox's
    pid 1, which takes the pid namespace with it; fallback: every process in the tree is
    stopped, then killed, then the process group, then every process of the worker's own uid)
    and ``WorkerFailure`` is raised. (The fallback also hunts processes that left the tree but
    kept the worker's ``GRADER_WORKER_ID`` in their environment.) The next request starts a
    fresh worker, with a fresh scratch directory, transparently. A worker found dead *between*
    requests (before the next one is sent) is replaced silently.

Not thread-safe for concurrent requests on one ``Worker`` (a lock serialises them); use one
Worker (and one slot) per parallel lane. Start each Worker's first request from a thread that
outlives it: the sandbox is tied to the thread that forked it (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import secrets
import select
import shutil
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path

from grader.worker import framing
from grader.worker.policy import DEFAULT_LIMITS, WALL_GRACE_S, Limits, Policy
from grader.worker.sandbox import (
    Confinement,
    SandboxUnavailable,
    SlotBusy,
    SlotLock,
    confine,
    sweep_uid,
    uid_for_slot,
)
from grader.worker.sanitize import sanitize_output

__all__ = ["Limits", "SandboxUnavailable", "SlotBusy", "Worker", "WorkerFailure",
           "worker_in_free_slot",
           "process_tree", "tree_cpu_seconds"]

CPU_POLL_GRACE_S = 0.05  # how long a reply may take before /proc is consulted at all
CPU_POLL_MAX_S = 0.25  # longest gap between two /proc polls
DEATH_WAIT_S = 1.0  # after EOF on the reply channel: how long to wait for the exit status
KILL_WAIT_S = 5.0
_READ_CHUNK = 1 << 20
_CLK_TCK = os.sysconf("SC_CLK_TCK")


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


class _Trouble(Exception):
    """Internal: why an exchange ended badly, before the worker has been killed."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(kind, detail)
        self.kind = kind  # "timeout" | "invalid" | "died"
        self.detail = detail


# --------------------------------------------------------------------------- process trees

_HAVE_CHILDREN_FILES = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out.extend(int(x) for x in fh.read().split())
        except (OSError, ValueError):
            continue
    return out


def _children_by_scan() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fields = _stat_fields(int(name))
        if fields is not None:
            kids.setdefault(int(fields[1]), []).append(int(name))
    return kids


def process_tree(root: int) -> list[int]:
    """``root`` and all its live descendants (threads' children included), from /proc."""
    scan = None if _HAVE_CHILDREN_FILES else _children_by_scan()
    seen = {root}
    order = [root]
    i = 0
    while i < len(order):
        pid = order[i]
        i += 1
        kids = _children(pid) if scan is None else scan.get(pid, [])
        for kid in kids:
            if kid not in seen:
                seen.add(kid)
                order.append(kid)
    return order


def _stat_fields(pid: int) -> list[bytes] | None:
    """Fields of /proc/PID/stat from field 3 (state) on; the name may contain anything."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return data.rpartition(b")")[2].split()


def tree_cpu_seconds(root: int) -> float:
    """CPU time of ``root``'s process tree: user + system of the live processes plus what they
    collected from their reaped children."""
    ticks = 0
    for pid in process_tree(root):
        fields = _stat_fields(pid)
        if fields is not None and len(fields) > 14:
            # fields[11..14] = utime, stime, cutime, cstime (stat fields 14..17)
            ticks += sum(int(x) for x in fields[11:15])
    return ticks / _CLK_TCK


def _marked_processes(marker: str) -> list[int]:
    """Processes whose environment carries ``GRADER_WORKER_ID=marker``: descendants of a
    fallback worker that left its tree (``setsid`` + double fork) but kept the environment."""
    needle = f"\0GRADER_WORKER_ID={marker}\0".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                environ = fh.read()
        except OSError:
            continue
        if needle in b"\0" + environ:
            found.append(int(name))
    return found


def _signal_all(pids: Sequence[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


# --------------------------------------------------------------------------- output


class _OutputSink:
    """Drains the worker's stdout+stderr pipe, keeping a bounded head and tail."""

    def __init__(self, fd: int, cap: int) -> None:
        self._fd = fd
        self._head_cap = cap // 4
        self._tail_cap = cap - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="grader-worker-output",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        try:
            while not self._stop.is_set():
                if not poller.poll(250):
                    continue
                try:
                    chunk = os.read(self._fd, 1 << 16)
                except InterruptedError:
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                self._add(chunk)
        finally:
            os.close(self._fd)

    def _add(self, chunk: bytes) -> None:
        with self._lock:
            self._total += len(chunk)
            room = self._head_cap - len(self._head)
            if room > 0:
                self._head += chunk[:room]
                chunk = chunk[room:]
            self._tail += chunk
            if len(self._tail) > 2 * self._tail_cap:
                del self._tail[: len(self._tail) - self._tail_cap]

    def finish(self, timeout: float) -> None:
        """Wait for end of output (the writers are dead), then stop reading regardless."""
        self._thread.join(timeout)
        self._stop.set()
        self._thread.join(1.0)

    def excerpt(self) -> str:
        with self._lock:
            tail = bytes(self._tail[-self._tail_cap:])
            omitted = self._total - len(self._head) - len(tail)
            head = bytes(self._head)
        if omitted <= 0:
            return sanitize_output(head + tail)
        return (f"{sanitize_output(head)}\n[... {omitted} bytes omitted ...]\n"
                f"{sanitize_output(tail)}")

    def last_text(self, size: int) -> str:
        with self._lock:
            data = bytes((self._head + self._tail)[-size:])
        return data.decode("utf-8", errors="replace")


# --------------------------------------------------------------------------- frames


_INCOMPLETE = object()


def _decode(buf: bytearray, cap: int) -> object:
    """The reply in ``buf``, ``_INCOMPLETE``, or ``_Trouble("invalid")`` (decoded by ``framing``).

    ``cap`` bounds what the trusted parent parses: JSON costs it ~15x the bytes in memory."""
    if len(buf) < framing.HEADER.size:
        return _INCOMPLETE
    try:
        end = framing.HEADER.size + framing.body_size(buf, cap)
        if len(buf) < end:
            return _INCOMPLETE
        if len(buf) > end:
            raise _Trouble("invalid", "sent more than one reply to one request")
        return framing.decode_body(bytes(buf[framing.HEADER.size:end]))
    except framing.FrameError as exc:
        raise _Trouble("invalid", f"sent a malformed reply ({exc})") from None


def _secs(seconds: float) -> str:
    return f"{seconds:.1f}" if seconds >= 1 else f"{seconds:.2g}"


# --------------------------------------------------------------------------- one worker process


class _Generation:
    """One started worker process (tree), its channel, output and scratch directory."""

    def __init__(self, confinement: Confinement, argv: Sequence[str], submission: Path,
                 slot: int) -> None:
        self.confinement = confinement
        self.marker = secrets.token_hex(16)
        self.scratch, target = confinement.make_scratch(submission, slot)
        fds: list[int] = []
        try:
            req_r, req_w = os.pipe()
            fds += [req_r, req_w]
            rep_r, rep_w = os.pipe()
            fds += [rep_r, rep_w]
            out_r, out_w = os.pipe()
            fds += [out_r, out_w]
            self.proc = subprocess.Popen(
                confinement.command(argv, self.scratch), cwd=self.scratch,
                env=confinement.environment(self.scratch, target, self.marker),
                stdin=subprocess.DEVNULL, stdout=out_w, stderr=subprocess.STDOUT,
                close_fds=False,  # the child setup closes everything but fds 0-2 and the channel
                start_new_session=True,
                preexec_fn=confinement.child_setup((req_r, rep_w)))
        except BaseException:
            for fd in fds:
                os.close(fd)
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        for fd in (req_r, rep_w, out_w):
            os.close(fd)
        self.req_w, self.rep_r = req_w, rep_r
        os.set_blocking(req_w, False)
        os.set_blocking(rep_r, False)
        self.output = _OutputSink(out_r, confinement.policy.limits.output_cap_bytes)
        self.reply_cap = confinement.policy.limits.reply_bytes
        self.finished = False

    # ---- talking

    def idle_state(self) -> str:
        """Between requests: "ok", "dead", "unsolicited" (wrote without being asked) or
        "closed" (closed its reply channel but lives on)."""
        if self.proc.poll() is not None:
            return "dead"
        poller = select.poll()
        poller.register(self.rep_r, select.POLLIN)
        if not poller.poll(0):
            return "ok"
        try:
            data = os.read(self.rep_r, 1)
        except BlockingIOError:
            return "ok"
        if data:
            return "unsolicited"
        try:
            self.proc.wait(0.2)
        except subprocess.TimeoutExpired:
            return "closed"
        return "dead"

    def exchange(self, data: bytes, budget: float, wall_factor: float) -> object:
        start = time.monotonic()
        wall_limit = budget * wall_factor + WALL_GRACE_S
        wall_deadline = start + wall_limit
        next_check = start + min(CPU_POLL_GRACE_S, budget)
        cpu_base: float | None = None
        pending = memoryview(data)
        buf = bytearray()
        poller = select.poll()
        poller.register(self.rep_r, select.POLLIN)
        poller.register(self.req_w, select.POLLOUT)
        while True:
            now = time.monotonic()
            if now >= next_check:
                if self.proc.poll() is not None:
                    raise _Trouble("died")
                cpu = tree_cpu_seconds(self.proc.pid)
                if cpu_base is None:
                    cpu_base = cpu
                used = cpu - cpu_base
                if used >= budget:
                    raise _Trouble("timeout", f"timed out after {_secs(budget)} s of CPU time")
                next_check = now + min(max(budget - used, 0.01), CPU_POLL_MAX_S)
            if now >= wall_deadline:
                raise _Trouble("timeout", f"timed out after {_secs(wall_limit)} s of wall-clock "
                                          f"time (CPU budget {_secs(budget)} s)")
            wait_ms = math.ceil(max(0.0, min(next_check, wall_deadline) - now) * 1000)
            for fd, event in poller.poll(wait_ms):
                if fd == self.req_w:
                    pending = self._send(pending, event)
                    if not pending:
                        poller.unregister(self.req_w)
                    continue
                try:
                    chunk = os.read(self.rep_r, _READ_CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    raise _Trouble("died", "closed its reply channel")
                buf += chunk
                reply = _decode(buf, self.reply_cap)
                if reply is not _INCOMPLETE:
                    if pending:
                        raise _Trouble("invalid", "replied before reading the whole request")
                    return reply

    def _send(self, pending: memoryview, event: int) -> memoryview:
        if event & (select.POLLERR | select.POLLHUP):
            raise _Trouble("died", "closed its request channel")  # nobody reads any more
        try:
            written = os.write(self.req_w, pending[: 1 << 16])
        except BlockingIOError:
            return pending
        except BrokenPipeError:
            raise _Trouble("died", "closed its request channel") from None
        return pending[written:]

    def exit_status(self) -> tuple[int | None, int | None] | None:
        """(signal, exit code) of a worker whose channel broke, or None if it lives on."""
        try:
            rc = self.proc.wait(DEATH_WAIT_S)
        except subprocess.TimeoutExpired:
            return None
        if rc < 0:
            return -rc, None
        if self.confinement.mode == "bwrap" and 128 < rc < 128 + signal.NSIG:
            return rc - 128, None  # bwrap reports a child killed by signal N as 128 + N
        return None, rc

    # ---- ending

    def finish(self) -> None:
        """Kill the whole tree, collect the last output, remove the scratch directory."""
        if self.finished:
            return
        self.finished = True
        try:
            self._kill_tree()
        finally:
            for fd in (self.req_w, self.rep_r):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self.output.finish(timeout=1.0)
            shutil.rmtree(self.scratch, ignore_errors=True)

    def _kill_tree(self) -> None:
        proc = self.proc
        if self.confinement.mode == "bwrap":
            # The sandbox's pid 1 (bwrap's child): its death kills and reaps the namespace.
            if proc.poll() is None:
                _signal_all(_children(proc.pid), signal.SIGKILL)
                try:
                    proc.wait(0.5)
                except subprocess.TimeoutExpired:
                    proc.kill()  # its children die with it (--die-with-parent)
        else:
            # Freeze first so nothing forks or reparents while we collect pids.
            victims: list[int] = []
            seen: set[int] = set()
            for _ in range(100):
                found = process_tree(proc.pid) + _marked_processes(self.marker)
                fresh = [p for p in found if p not in seen]
                if not fresh:
                    break
                _signal_all(fresh, signal.SIGSTOP)
                seen.update(fresh)
                victims += fresh
            _signal_all(victims, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            if self.confinement.policy.uid is not None:
                sweep_uid(self.confinement.policy.uid)
        try:
            proc.wait(KILL_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(KILL_WAIT_S)


_MEMORY_SIGNS = re.compile(r"MemoryError|Cannot allocate memory|std::bad_alloc|out of memory",
                           re.IGNORECASE)


def _death_detail(status: tuple[int | None, int | None], last_output: str,
                  policy: Policy) -> str:
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


# --------------------------------------------------------------------------- the Worker


class _Resources:
    """What must be released even if the Worker is dropped without close()."""

    def __init__(self, slot_lock: SlotLock | None) -> None:
        self.slot_lock = slot_lock
        self.generation: _Generation | None = None

    def release(self) -> None:
        generation, self.generation = self.generation, None
        try:
            if generation is not None:
                generation.finish()
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

    def __init__(self, argv: Sequence[str | os.PathLike[str]], *,
                 submission: str | os.PathLike[str],
                 readable: Sequence[str | os.PathLike[str]],
                 hidden: Sequence[str | os.PathLike[str]],
                 limits: Limits = DEFAULT_LIMITS, sandbox: str = "auto", slot: int = 0) -> None:
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
            self._confinement = confine(self._argv, readable=readable, hidden=hidden,
                                        limits=limits, sandbox=sandbox, slot=slot)
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
        return (f"Worker({self._argv!r}, mode={self.mode!r}, uid={self.uid}, "
                f"running={self.running}, closed={self._closed})")

    # ---- the interface

    def start(self) -> None:
        """Start the worker now rather than on the first request (to keep start-up out of it)."""
        with self._lock:
            self._check_open()
            self._current()

    def request(self, message: dict, cpu_budget_s: float) -> object:
        """Send one frame and return the reply frame, or raise ``WorkerFailure``."""
        if isinstance(cpu_budget_s, bool) or not isinstance(cpu_budget_s, (int, float)) \
                or not math.isfinite(cpu_budget_s) or cpu_budget_s <= 0:
            raise ValueError(f"cpu_budget_s must be a positive number, got {cpu_budget_s!r}")
        data = framing.encode(message)
        with self._lock:
            self._check_open()
            generation = self._current()
            try:
                return generation.exchange(data, float(cpu_budget_s), self.limits.wall_factor)
            except _Trouble as trouble:
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

    def _current(self) -> _Generation:
        generation = self._resources.generation
        if generation is not None:
            state = generation.idle_state()
            if state == "ok":
                return generation
            if state == "unsolicited":
                raise self._fail(generation, _Trouble(
                    "invalid", "wrote to its reply channel without being asked"))
            if state == "closed":
                raise self._fail(generation, _Trouble(
                    "invalid", "closed its reply channel"))
            self._retire(generation)  # died between requests: replace it quietly
        generation = _Generation(self._confinement, self._argv, self._submission, self.slot)
        self._resources.generation = generation
        return generation

    def _retire(self, generation: _Generation) -> None:
        generation.finish()
        self._last_excerpt = generation.output.excerpt()
        if self._resources.generation is generation:
            self._resources.generation = None

    def _fail(self, generation: _Generation, trouble: _Trouble) -> WorkerFailure:
        kind, detail = trouble.kind, trouble.detail
        status = generation.exit_status() if kind == "died" else None
        if kind == "died" and status is None:  # the channel broke, yet the worker lives on
            kind, detail = "invalid", detail or "closed its reply channel"
        self._retire(generation)  # kills the tree and collects the last of its output
        if status is not None:
            kind = "crashed"
            detail = _death_detail(status, generation.output.last_text(4096),
                                   self._confinement.policy)
        return WorkerFailure(kind, detail, self._last_excerpt)


SLOTS_TO_TRY = 64


def worker_in_free_slot(argv: Sequence[str | os.PathLike[str]], *, first_slot: int = 0,
                        **options: object) -> Worker:
    """A ``Worker`` on the first slot from ``first_slot`` that no other live Worker holds, so
    concurrent grading runs (tests, a batch, two terminals) never need to coordinate."""
    for slot in range(first_slot, first_slot + SLOTS_TO_TRY):
        try:
            return Worker(argv, slot=slot, **options)  # type: ignore[arg-type]
        except SlotBusy:
            continue
    raise SlotBusy(f"no free worker slot in {first_slot}..{first_slot + SLOTS_TO_TRY - 1}")
