"""Workers forked from a warm zygote: the trusted parent's side (``grader.sandbox.zygote``).

Starting Python and importing numpy and the worker's modules is most of what a sandboxed
worker costs; a grade starts several (one per assignment's runs, a fresh one after each
timeout or crash, one to ask a failure's requests again). A zygote pays it once: it starts in
the very sandbox a worker would have (``policy.zygote_arguments``: the same mounts, masks,
namespaces and limits), imports the worker's modules, and forks each worker, which takes the
uid of its own ``Worker``'s slot, its own scratch directory (inside the zygote's, unreadable to
the others) and its own channel (three pipes passed over the zygote's control socket, which
only this process holds).

Which workers share one: those of this process and thread with the same confinement but for
the uid, and the same command (``zygote_for``); the zygote ends when the last ``Worker`` that
used it closes. Only where the sandbox is bubblewrap and each worker has a uid of its own (the
grader runs as root): elsewhere a worker could signal its zygote or its siblings, and starts
as before. A zygote that fails to start, to answer or to fork is ended and never asked again;
the worker it did not give starts as before (``process.Generation``), so no grade is lost.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence

from grader.sandbox.output import OutputSink
from grader.sandbox.policy import zygote_arguments
from grader.sandbox.proctree import children, end_sandbox, host_pid
from grader.sandbox.sandbox import Confinement, sweep_uid

MODULE = "grader.sandbox.zygote"
READY_S = 60.0  # how long a zygote may take to import the worker's modules (a loaded machine)
ANSWER_S = 10.0  # how long it may take to answer a fork or a wait
_POLL_S = 0.01


class ZygoteBroken(Exception):
    """The zygote did not start, did not answer in time, or answered nonsense."""


class Zygote:
    """A started zygote: its sandbox, its control socket and the folder of its workers'
    scratch directories. Thread-safe: one order at a time."""

    def __init__(self, confinement: Confinement, argv: Sequence[str]) -> None:
        assert confinement.bwrap is not None
        self.confinement = confinement
        self.broken = False
        self.holders = 0
        self._lock = threading.Lock()
        self.root = os.path.realpath(tempfile.mkdtemp(prefix="grader-zygote-"))
        os.chmod(self.root, 0o711)  # workers reach their own folder in it, list nothing
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        out_r, out_w = os.pipe()
        command = [
            confinement.bwrap,
            *zygote_arguments(confinement.policy, self.root),
            argv[0],
            "-I",
            "-m",
            MODULE,
            *argv[2:],
        ]
        try:
            self.proc = subprocess.Popen(
                command,
                cwd=self.root,
                env=confinement.environment(self.root, self.root),
                stdin=subprocess.DEVNULL,
                stdout=out_w,
                stderr=subprocess.STDOUT,
                close_fds=False,  # the child setup closes everything but fds 0-2 and the socket
                start_new_session=True,
                preexec_fn=confinement.child_setup((theirs.fileno(), theirs.fileno())),
            )
        except BaseException:
            ours.close()
            os.close(out_r)
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        finally:
            theirs.close()
            os.close(out_w)
        self._socket = ours
        self.output = OutputSink(out_r, confinement.policy.limits.output_cap_bytes)
        self.pid: int | None = None  # the zygote's pid here, once it said it is ready

    # ---- orders

    def fork(self, environment: dict[str, str], uid: int, fds: Sequence[int]) -> Forked:
        """A worker forked with ``environment`` (its scratch is ``GRADER_SCRATCH``), ``uid`` and
        the pipes ``fds`` (request's read end, reply's write end, output's write end)."""
        order = {
            "fork": {
                "cwd": environment["GRADER_SCRATCH"],
                "env": environment,
                "uid": uid,
                "processes": self.confinement.policy.limits.processes,
            }
        }
        with self._lock:
            zygote = self._ready()
            answer = self._ask(order, fds)
            inner = answer.get("pid")
            if not isinstance(inner, int) or isinstance(inner, bool):
                raise self._broke(f"did not fork: {answer.get('error', answer)!r}")
            pid = host_pid(zygote, inner)
            if pid is None or pid not in children(zygote):
                raise self._broke(f"forked pid {inner}, which is no child of it")
        return Forked(self, pid, inner, uid)

    def reap(self, inner: int) -> int | None:
        """The exit status of an ended worker as bubblewrap reports one (128 + N for signal
        N), reaped; None while it lives."""
        with self._lock:
            status = self._ask({"wait": inner}).get("status", "?")
        if status is None:
            return None
        if isinstance(status, list) and len(status) == 2:
            sig, code = status
            if isinstance(sig, int) and not isinstance(sig, bool):
                return 128 + sig
            if isinstance(code, int) and not isinstance(code, bool):
                return code
        return 128 + signal.SIGKILL  # reaped by someone else: its status is lost

    def _ready(self) -> int:
        if self.pid is None:
            answer = self._receive(READY_S)
            inner = answer.get("ready")
            host = host_pid(self.proc.pid, inner) if isinstance(inner, int) else None
            if host is None:
                raise self._broke(f"did not start ({answer!r})")
            self.pid = host
        return self.pid

    def _ask(self, order: dict, fds: Sequence[int] = ()) -> dict:
        if self.broken:
            raise ZygoteBroken("broken before")
        try:
            socket.send_fds(self._socket, [json.dumps(order).encode()], list(fds))
        except OSError as exc:
            raise self._broke(f"cannot be written to ({exc})") from None
        return self._receive(ANSWER_S)

    def _receive(self, seconds: float) -> dict:
        if self.broken:
            raise ZygoteBroken("broken before")
        poller = select.poll()  # not select(): a descriptor may be above 1023
        poller.register(self._socket, select.POLLIN)
        if not poller.poll(seconds * 1000):
            raise self._broke(f"did not answer within {seconds:g} s")
        try:
            data = self._socket.recv(1 << 16)
            answer = json.loads(data) if data else None
        except (OSError, ValueError, RecursionError):
            answer = None
        if not isinstance(answer, dict):
            raise self._broke("hung up" if not data else "answered nonsense")
        return answer

    def _broke(self, why: str) -> ZygoteBroken:
        self.broken = True
        return ZygoteBroken(why)

    # ---- ending

    def close(self) -> None:
        """Kill the sandbox and every process in it, remove the scratch folder."""
        self.broken = True
        end_sandbox(self.proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5.0)
        self._socket.close()
        self.output.finish(timeout=1.0)
        shutil.rmtree(self.root, ignore_errors=True)


class Forked:
    """A worker a zygote forked, as ``process.Generation`` uses a ``subprocess.Popen``: its pid
    here, ``poll``, ``wait`` and ``kill`` (which ends every process of its uid)."""

    def __init__(self, zygote: Zygote, pid: int, inner: int, uid: int) -> None:
        self.zygote = zygote
        self.pid = pid
        self.inner = inner
        self.uid = uid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and not _alive(self.pid, self.zygote):
            try:
                self.returncode = self.zygote.reap(self.inner)
            except ZygoteBroken:
                self.returncode = 128 + signal.SIGKILL  # the sandbox ended, and it with it
        return self.returncode

    def wait(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while (code := self.poll()) is None:
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
            time.sleep(_POLL_S)
        return code

    def kill(self) -> None:
        """Kill the worker, what it started and what left its tree: every process of its uid,
        which no other worker has (the parent holds its slot); then remove what it left in
        the zygote's /dev/shm, which the next worker would see (a worker started alone has a
        /dev/shm of its own)."""
        sweep_uid(self.uid)
        if self.zygote.pid is None:
            return
        with contextlib.suppress(OSError):
            for entry in os.scandir(f"/proc/{self.zygote.pid}/root/dev/shm"):
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_uid != self.uid:
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path)
                    else:
                        os.unlink(entry.path)


def _alive(pid: int, zygote: Zygote) -> bool:
    """Whether the forked worker ``pid`` runs. Not once its zygote is gone: then its pid is
    reaped by bubblewrap's init and may be another process's."""
    if zygote.proc.poll() is not None or zygote.pid is None:
        return False
    return _running(zygote.pid) and _running(pid)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rpartition(b")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


# --------------------------------------------------------------------------- sharing

_zygotes: dict[tuple, Zygote] = {}
_registry_lock = threading.Lock()


def zygote_for(confinement: Confinement, argv: Sequence[str]) -> Zygote | None:
    """The zygote that forks workers of ``argv`` under ``confinement`` for this process and
    thread (the sandbox dies with the thread that started it), started if none works; None
    where workers are not forked (see the module's docstring) or it cannot start. The caller
    holds it (``holders``) until ``release``."""
    policy = confinement.policy
    if confinement.mode != "bwrap" or policy.uid is None or list(argv[1:2]) != ["-I"]:
        return None
    key = (
        os.getpid(),
        threading.get_ident(),
        confinement.bwrap,
        dataclasses.replace(policy, uid=None),
        tuple(argv),
    )
    with _registry_lock:
        zygote = _zygotes.get(key)
        if zygote is None or zygote.broken:
            try:
                zygote = Zygote(confinement, argv)
            except (OSError, subprocess.SubprocessError):
                return None
            _zygotes[key] = zygote
        zygote.holders += 1
        return zygote


def release(zygote: Zygote) -> None:
    """One holder less; the last one ends the zygote."""
    with _registry_lock:
        zygote.holders -= 1
        if zygote.holders > 0:
            return
        for key, held in list(_zygotes.items()):
            if held is zygote:
                del _zygotes[key]
    zygote.close()
