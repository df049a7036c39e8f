"""Workers forked from a warm zygote: the trusted parent's side (``grader.sandbox.zygote``).

Starting Python and importing numpy and the worker's modules is most of what a sandboxed
worker costs; a grade starts several (one per assignment's runs, a fresh one after each
timeout or crash, one to ask a failure's requests again). A zygote pays it once: it starts in
the very sandbox a worker would have (``policy.zygote_arguments``: the same mounts, masks,
namespaces and limits), imports the worker's modules, and forks each worker, which takes the
uid of its own ``Worker``'s slot, its own scratch directory (inside the zygote's, unreadable to
the others) and its own channel (three pipes passed over the zygote's control socket, which
only the trusted side holds: this process, or a lane and the grading runs it forked).

Which workers share one (``grader.sandbox.sharing``): those of a grading process with the same
confinement but for the uid, and the same command, or of every run a lane forks. Only where
the sandbox is bubblewrap and each worker has a uid of its own (the grader runs as root):
elsewhere a worker could signal its zygote or its siblings, and starts as before. A zygote
that fails to start, to answer or to fork is ended and never asked again; the worker it did
not give starts as before (``process.Generation``), so no grade is lost.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
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
from collections.abc import Iterator, Sequence

from grader.sandbox.output import OutputSink
from grader.sandbox.policy import zygote_arguments
from grader.sandbox.proctree import (
    Exit,
    children,
    end_sandbox,
    host_pid,
    parent,
    process_tree,
    running,
    signal_all,
)
from grader.sandbox.sandbox import Confinement, sweep_uid

MODULE = "grader.sandbox.zygote"
READY_S = 60.0  # how long a zygote may take to import the worker's modules (a loaded machine)
ANSWER_S = 10.0  # how long it may take to answer a fork or a wait
_POLL_S = 0.01


class ZygoteBroken(Exception):
    """The zygote did not start, did not answer in time, or answered nonsense."""


class Zygote:
    """A started zygote: its sandbox, its control socket and the folder of its workers'
    scratch directories. One order at a time, across threads and processes (``_turn``): a
    lane's forked runs share it (``adopt``)."""

    def __init__(self, confinement: Confinement, argv: Sequence[str]) -> None:
        assert confinement.bwrap is not None
        self.confinement = confinement
        self.broken = False
        self.holders = 0
        self._lock = threading.Lock()
        self._orders = itertools.count()
        self.turn = _turn_file()
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
            os.close(self.turn)
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        finally:
            theirs.close()
            os.close(out_w)
        self._socket = ours
        self.output: OutputSink | None = OutputSink(
            out_r, confinement.policy.limits.output_cap_bytes
        )
        self.sandbox = self.proc.pid
        self.pid: int | None = None  # the zygote's pid here, once it said it is ready
        self.exit: Exit | None = None  # the zygote's, once its pid is known
        self._sandbox_exit: Exit | None = None  # bubblewrap's, where another process owns it

    @classmethod
    def adopt(
        cls, confinement: Confinement, control: socket.socket, turn: int, root: str, sandbox: int
    ) -> Zygote:
        """A zygote another process (a lane) started and owns, as one of its forked runs uses
        it: its control socket and turn file, handed over; it ends with its owner, not here."""
        zygote = cls.__new__(cls)
        zygote.confinement, zygote.broken, zygote.holders = confinement, False, 0
        zygote._lock, zygote._orders = threading.Lock(), itertools.count()
        # a lock of its own: flock locks belong to an open file, which the owner's is
        zygote.turn = os.open(f"/proc/self/fd/{turn}", os.O_RDWR)
        os.close(turn)
        zygote._socket, zygote.root = control, root
        zygote.proc, zygote.output, zygote.sandbox, zygote.pid = None, None, sandbox, None
        zygote.exit, zygote._sandbox_exit = None, Exit(sandbox)
        return zygote

    def handover(self) -> tuple[list[int], dict]:
        """What ``adopt`` takes in another process: the control socket's and turn file's
        descriptors, and where the sandbox and the scratch folder are."""
        return [self._socket.fileno(), self.turn], {"root": self.root, "sandbox": self.sandbox}

    def alive(self) -> bool:
        """Whether the sandbox runs: from /proc where this process is not its parent (a lane's
        run, whose ``Popen.poll`` of another's child would say it ended)."""
        if self.broken:
            return False
        if self.proc is not None:
            return self.proc.poll() is None
        return self._sandbox_exit is not None and not self._sandbox_exit.ended()

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
        with self._turn():
            zygote = self._ready()
            answer = self._ask(order, fds)
            inner = answer.get("pid")
            if not isinstance(inner, int) or isinstance(inner, bool):
                raise self._broke(f"did not fork: {answer.get('error', answer)!r}")
            pid = host_pid(zygote, inner)
            if pid is None or pid not in children(zygote):
                raise self._broke(f"forked pid {inner}, which is no child of it")
            return Forked(self, pid, inner, uid)  # its Exit taken before any order may reap it

    def reap(self, inner: int) -> int | None:
        """The exit status of an ended worker as bubblewrap reports one (128 + N for signal
        N), reaped; None while it lives."""
        with self._turn():
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

    @contextlib.contextmanager
    def _turn(self) -> Iterator[None]:
        """One order at a time: a thread lock within this process, the turn file's lock across
        the processes that share the control socket (each opened the file on its own)."""
        with self._lock:
            fcntl.flock(self.turn, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self.turn, fcntl.LOCK_UN)

    def _ready(self) -> int:
        """The zygote's pid here. Whoever takes the first turn reads its "ready" and writes the
        pid in the turn file, where the other processes that share it read it."""
        if self.pid is None:
            written = os.pread(self.turn, 32, 0)
            if written:
                host = int(written)
            else:
                answer = self._receive(READY_S)
                inner = answer.get("ready")
                host = host_pid(self.sandbox, inner) if isinstance(inner, int) else None
                if host is None:
                    raise self._broke(f"did not start ({answer!r})")
                os.pwrite(self.turn, str(host).encode(), 0)
            self.pid, self.exit = host, Exit(host)
        return self.pid

    def _ask(self, order: dict, fds: Sequence[int] = ()) -> dict:
        """The zygote's answer to ``order``, which carries an id the answer must echo: a late
        answer to an order that timed out is never taken for the next one's."""
        if self.broken:
            raise ZygoteBroken("broken before")
        tag = f"{os.getpid()}.{next(self._orders)}"
        try:
            socket.send_fds(self._socket, [json.dumps({**order, "id": tag}).encode()], list(fds))
        except OSError as exc:
            raise self._broke(f"cannot be written to ({exc})") from None
        answer = self._receive(ANSWER_S)
        if answer.get("id") != tag:
            raise self._broke(f"answered another order than {tag}")
        return answer

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
        """Never ask it again, nor let any process that shares it: the socket shut down ends
        the zygote (it reads the hang-up) and fails every other holder's next order."""
        self.broken = True
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        return ZygoteBroken(why)

    # ---- ending

    def clear(self) -> None:
        """Between two uploads in a lane, none of whose workers may run on: end every process
        in the sandbox but its init and the zygote, reap them, and remove what they left (the
        scratch folders, /dev/shm, System V IPC objects), so that the next upload's workers,
        whose uids are the same slots', find nothing of it. ``ZygoteBroken`` if it cannot."""
        with self._turn():
            zygote = self._ready()
            keep = {self.sandbox, zygote, parent(zygote)}
            ended = [pid for pid in process_tree(self.sandbox) if pid not in keep]
            signal_all(ended, signal.SIGKILL)
            deadline = time.monotonic() + ANSWER_S
            while any(running(pid) for pid in ended) and time.monotonic() < deadline:
                time.sleep(_POLL_S)
            self._ask({"reap": None})
        for folder in (self.root, f"/proc/{zygote}/root/dev/shm"):
            _empty(folder)
        ipc = subprocess.run(
            ["nsenter", f"--ipc=/proc/{zygote}/ns/ipc", "ipcrm", "--all"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=ANSWER_S,
            check=False,
        )
        if ipc.returncode != 0:
            raise self._broke(f"its IPC objects stay ({ipc.stderr.decode(errors='replace')})")

    def close(self) -> None:
        """Kill the sandbox and every process in it, remove the scratch folder; where another
        process owns it (``adopt``), only let go of its socket and turn file."""
        self.broken = True
        for watch in (self.exit, self._sandbox_exit):
            if watch is not None:
                watch.close()
        if self.proc is not None:
            end_sandbox(self.proc)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5.0)
        self._socket.close()
        os.close(self.turn)
        if self.output is not None:
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
        self.exit = Exit(pid)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and not _alive(self):
            try:
                self.returncode = self.zygote.reap(self.inner)
            except ZygoteBroken:
                self.returncode = 128 + signal.SIGKILL  # the sandbox ended, and it with it
            self.exit.close()
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
        if self.zygote.pid is not None:
            _empty(f"/proc/{self.zygote.pid}/root/dev/shm", self.uid)


def _alive(worker: Forked) -> bool:
    """Whether the forked ``worker`` runs. Not once its zygote is gone: then its pid is
    reaped by bubblewrap's init and may be another process's."""
    zygote = worker.zygote
    if zygote.exit is None or not zygote.alive():
        return False
    return not zygote.exit.ended() and not worker.exit.ended()


def _empty(folder: str, uid: int | None = None) -> None:
    """Remove what ``folder`` holds (only what ``uid`` owns, given one)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            with contextlib.suppress(OSError):
                if uid is not None and entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)


def _turn_file() -> int:
    """An unlinked file whose lock gives the turn and which holds the zygote's pid once read."""
    fd, path = tempfile.mkstemp(prefix="grader-zygote-turn-")
    os.unlink(path)
    return fd
