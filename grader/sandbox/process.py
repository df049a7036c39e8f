"""One started worker process (tree): its channel, its deadlines, its end.

``launch.Worker`` starts a fresh one after every failure; this module runs a single one.

Channel
    Two pipes: the worker reads length-prefixed JSON requests (``framing``) on
    ``framing.REQUEST_FD`` and writes one reply per request on ``framing.REPLY_FD``. Its stdin
    is /dev/null; stdout and stderr share one pipe that ``output.OutputSink`` drains.

Deadlines
    A request is charged the CPU time of the worker's whole process tree, read from /proc only
    when the answer does not come back within ``CPU_POLL_GRACE_S`` (a quick request never
    touches /proc, so load on the machine cannot turn it into a timeout). The baseline is taken
    at that first poll, so a request may overrun its budget by at most the grace period, never
    time out early. A wall-clock backstop (``budget * wall_factor + WALL_GRACE_S``) catches a
    worker that is blocked or sleeping. Reads and writes are non-blocking under ``poll``: a
    worker that writes half a frame and stalls still meets the deadline.

Ending
    The whole process tree is killed (bwrap: the sandbox's pid 1, which takes the pid namespace
    with it; a worker forked by a zygote, ``warm.Forked``: every process of its uid, which only
    it has; fallback: every process in the tree is stopped, then killed, then the process
    group, then every process of the worker's own uid), and the scratch directory removed. The
    fallback also hunts processes that left the tree but kept the worker's ``GRADER_WORKER_ID``
    in their environment.
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from grader.sandbox import framing
from grader.sandbox.output import OutputSink
from grader.sandbox.policy import WALL_GRACE_S
from grader.sandbox.proctree import (
    end_sandbox,
    marked_processes,
    process_tree,
    signal_all,
    tree_cpu_seconds,
)
from grader.sandbox.sandbox import Confinement, sweep_uid
from grader.sandbox.warm import Forked, Zygote, ZygoteBroken

CPU_POLL_GRACE_S = 0.05  # how long a reply may take before /proc is consulted at all
CPU_POLL_MAX_S = 0.25  # longest gap between two /proc polls
DEATH_WAIT_S = 1.0  # after EOF on the reply channel: how long to wait for the exit status
KILL_WAIT_S = 5.0
_READ_CHUNK = 1 << 20


class Trouble(Exception):
    """Why an exchange ended badly, before the worker has been killed."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(kind, detail)
        self.kind = kind  # "timeout" | "invalid" | "died"
        self.detail = detail


_INCOMPLETE = object()


def _reply(buf: bytearray, cap: int) -> object:
    """The reply in ``buf``, ``_INCOMPLETE``, or ``Trouble("invalid")`` (decoded by ``framing``).

    ``cap`` bounds what the trusted parent parses: JSON costs it ~15x the bytes in memory."""
    if len(buf) < framing.HEADER.size:
        return _INCOMPLETE
    try:
        end = framing.HEADER.size + framing.body_size(buf, cap)
        if len(buf) < end:
            return _INCOMPLETE
        if len(buf) > end:
            raise Trouble("invalid", "sent more than one reply to one request")
        return framing.decode_body(bytes(buf[framing.HEADER.size : end]))
    except framing.FrameError as exc:
        raise Trouble("invalid", f"sent a malformed reply ({exc})") from None


def _secs(seconds: float) -> str:
    return f"{seconds:.1f}" if seconds >= 1 else f"{seconds:.2g}"


def _forked(
    zygote: Zygote | None, uid: int | None, environment: dict[str, str], fds: tuple[int, int, int]
) -> Forked | None:
    """A worker forked by ``zygote`` as ``uid`` on the pipes ``fds``, or None: to start as
    before."""
    if zygote is None or uid is None:
        return None
    try:
        return zygote.fork(environment, uid, fds)
    except ZygoteBroken:
        return None


def _pipes(fds: list[int]) -> tuple[int, int, int, int, int, int]:
    """A worker's three pipes (request, reply, output: read and write ends), each end also
    added to ``fds`` as soon as it is open."""
    for _ in range(3):
        fds += os.pipe()
    return fds[-6], fds[-5], fds[-4], fds[-3], fds[-2], fds[-1]


class Generation:
    """One started worker process (tree), its channel, output and scratch directory: forked
    by ``zygote`` when one is given and works, started alone otherwise."""

    def __init__(
        self,
        confinement: Confinement,
        argv: Sequence[str],
        submission: Path,
        slot: int,
        zygote: Zygote | None = None,
    ) -> None:
        self.confinement = confinement
        self.marker = secrets.token_hex(16)
        within = zygote.root if zygote is not None and not zygote.broken else None
        self.scratch, target = confinement.make_scratch(submission, slot, within)
        environment = confinement.environment(self.scratch, target, self.marker)
        fds: list[int] = []
        try:
            req_r, req_w, rep_r, rep_w, out_r, out_w = _pipes(fds)
            forked = _forked(zygote, confinement.policy.uid, environment, (req_r, rep_w, out_w))
            if forked is None and zygote is not None:
                # a zygote that failed may still fork late: that worker keeps pipes nobody uses
                while fds:
                    os.close(fds.pop())
                req_r, req_w, rep_r, rep_w, out_r, out_w = _pipes(fds)
            self.proc = forked or subprocess.Popen(
                confinement.command(argv, self.scratch),
                cwd=self.scratch,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=out_w,
                stderr=subprocess.STDOUT,
                close_fds=False,  # the child setup closes everything but fds 0-2 and the channel
                start_new_session=True,
                preexec_fn=confinement.child_setup((req_r, rep_w)),
            )
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
        self.output = OutputSink(out_r, confinement.policy.limits.output_cap_bytes)
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
        """Send the frame ``data``, return the decoded reply; ``Trouble`` if the worker overruns
        ``budget`` CPU seconds (or the wall-clock backstop), dies or breaks the protocol."""
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
                    return self._last_reply(buf, pending)
                cpu = tree_cpu_seconds(self.proc.pid)
                if cpu_base is None:
                    cpu_base = cpu
                used = cpu - cpu_base
                if used >= budget:
                    raise Trouble("timeout", f"timed out after {_secs(budget)} s of CPU time")
                next_check = now + min(max(budget - used, 0.01), CPU_POLL_MAX_S)
            if now >= wall_deadline:
                raise Trouble(
                    "timeout",
                    f"timed out after {_secs(wall_limit)} s of wall-clock "
                    f"time (CPU budget {_secs(budget)} s)",
                )
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
                    raise Trouble("died", "closed its reply channel")
                buf += chunk
                reply = _reply(buf, self.reply_cap)
                if reply is not _INCOMPLETE:
                    if pending:
                        raise Trouble("invalid", "replied before reading the whole request")
                    return reply

    def _last_reply(self, buf: bytearray, pending: memoryview) -> object:
        """The whole reply a worker that has exited wrote before it did, or ``Trouble("died")``.
        A worker that answers once and exits (the unpacker) may be seen dead before its reply
        has been read, on a loaded machine: the reply is still in the channel."""
        while True:
            try:
                chunk = os.read(self.rep_r, _READ_CHUNK)
            except BlockingIOError:
                break
            if not chunk:
                break
            buf += chunk
        reply = _reply(buf, self.reply_cap)
        if reply is _INCOMPLETE or pending:
            raise Trouble("died")
        return reply

    def _send(self, pending: memoryview, event: int) -> memoryview:
        if event & (select.POLLERR | select.POLLHUP):
            raise Trouble("died", "closed its request channel")  # nobody reads any more
        try:
            written = os.write(self.req_w, pending[: 1 << 16])
        except BlockingIOError:
            return pending
        except BrokenPipeError:
            raise Trouble("died", "closed its request channel") from None
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
        if isinstance(proc, Forked):
            proc.kill()  # every process of its uid, in the zygote's sandbox
        elif self.confinement.mode == "bwrap":
            end_sandbox(proc)
        else:
            # Freeze first so nothing forks or reparents while we collect pids.
            victims: list[int] = []
            seen: set[int] = set()
            for _ in range(100):
                found = process_tree(proc.pid) + marked_processes(self.marker)
                fresh = [p for p in found if p not in seen]
                if not fresh:
                    break
                signal_all(fresh, signal.SIGSTOP)
                seen.update(fresh)
                victims += fresh
            signal_all(victims, signal.SIGKILL)
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
