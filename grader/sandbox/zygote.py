"""A warm worker inside the sandbox: it imports a worker's modules once, then forks workers.

Started by the trusted parent (``grader.sandbox.warm``) in the sandbox a worker would have had,
as ``python -I -m grader.sandbox.zygote TARGET...``, TARGET being what the worker runs
(``-m grader.worker.runner``, or a script and its arguments). It runs as root inside the
sandbox with no capability but CAP_SETUID, CAP_SETGID and CAP_SETPCAP (to hand each worker its
own uid) and ``no_new_privs``. It imports the target's modules (and what the target's
``preload`` names), never a submission: no student code runs in it, and no submission is on its
``sys.path``.

Control: one ``SOCK_SEQPACKET`` socket on fd 3 that only the trusted side holds (the grading
process, or a lane and its grading runs), a JSON message per packet, each with an ``"id"`` its
answer echoes. ``{"fork": {...}}`` with three descriptors (the worker's request pipe, its reply
pipe and its output pipe) forks a worker and answers its pid; ``{"wait": pid}`` reaps a worker
that has ended and answers how; ``{"reap": null}`` reaps every one that has ended. The fork
becomes the worker as a fresh ``python -I`` would (``become``): its own session, descriptors
0-4 only, its scratch directory and environment, its own uid with no capabilities, its process
limit, no POSIX message queue; then the target runs as ``__main__``, and the submission goes
on ``sys.path`` there, as in a worker started alone.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import socket

CONTROL_FD = 3
_CAPABILITY_VERSION_3 = 0x20080522
_PR_CAPBSET_DROP = 24
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36


def target_of(words: list[str]) -> tuple[str, str, list[str]]:
    """What a worker's command line after ``python -I`` runs: ("module", name, arguments) or
    ("script", path, arguments)."""
    if len(words) >= 2 and words[0] == "-m":
        return "module", words[1], words[2:]
    if words and not words[0].startswith("-"):
        return "script", words[0], words[1:]
    raise SystemExit(f"zygote: cannot run {words!r}")


def warm(kind: str, name: str, arguments: list[str]) -> None:
    """Import what the worker imports before any submission: its module, and what its
    ``preload`` names (``grader.worker.fresh``'s modules to import first). A script imports
    nothing here: what it imports, it imports in each worker."""
    if kind == "module":
        import importlib

        module = importlib.import_module(name)
        preload = getattr(module, "preload", None)
        if callable(preload):
            preload(arguments)


def main() -> None:
    kind, name, arguments = target_of(sys.argv[1:])
    warm(kind, name, arguments)
    warmed = set(sys.modules)
    # The zygote's own modules from here on: dropped in each worker (``become``) unless the
    # target had imported them, as a worker started alone lacks them.
    import json
    import runpy
    import socket

    os.close(4)  # the sandbox's setup hands the control socket over as fds 3 and 4
    control = socket.socket(fileno=CONTROL_FD)
    control.send(json.dumps({"ready": os.getpid()}).encode())
    order = serve(control)
    if order is None:
        return
    become(order, warmed)
    sys.argv = [name, *arguments]
    if kind == "module":
        sys.modules.pop(name, None)  # runs as __main__, as ``python -m`` runs it
        runpy.run_module(name, run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(name, run_name="__main__")


def serve(control: socket.socket) -> tuple[dict, list[int]] | None:
    """Answer the parent until it hangs up (None) or a fork returns as a worker: then its order
    and descriptors, in the fork."""
    import json
    import socket

    while True:
        try:
            data, fds, _, _ = socket.recv_fds(control, 1 << 16, 3)
        except OSError:
            return None
        if not data:
            return None
        order = json.loads(data)
        if "fork" in order:
            reply = _fork(fds, control)
            if reply is None:
                return order["fork"], fds
        elif "reap" in order:
            reply = {"reaped": reap_all()}
        else:
            reply = {"status": reap(int(order["wait"]))}
        reply["id"] = order.get("id")  # which order this answers
        control.send(json.dumps(reply).encode())


def _fork(fds: list[int], control: socket.socket) -> dict | None:
    """Fork a worker: None in the fork (the control socket let go of), its pid in the zygote,
    which keeps none of the worker's descriptors."""
    pid = -1
    try:
        if len(fds) != 3:
            return {"error": f"{len(fds)} descriptors, not 3"}
        pid = os.fork()
    except OSError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        if pid != 0:
            for fd in fds:
                os.close(fd)
    if pid == 0:
        control.detach()
        return None
    return {"pid": pid}


def reap(pid: int) -> list[int | None] | None:
    """[signal, None] or [None, exit code] of a worker that has ended, reaped; None while it
    lives; [None, None] when it is no child of this zygote (reaped before)."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return [None, None]
    if not done:
        return None
    if os.WIFSIGNALED(status):
        return [os.WTERMSIG(status), None]
    return [None, os.waitstatus_to_exitcode(status)]


def reap_all() -> int:
    """Reap every worker that has ended (a lane clears its zygote between two uploads, once
    it killed them all): how many."""
    reaped = 0
    while True:
        try:
            done, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if not done:
            return reaped
        reaped += 1


def become(order: tuple[dict, list[int]], warmed: set[str]) -> None:
    """In the fork: everything a worker started alone gets before its first line (the sandbox's
    setup and ``setpriv``'s), or exit before any of the target runs."""
    spec, fds = order
    try:
        _become(spec, fds, warmed)
    except BaseException as exc:  # noqa: BLE001 - nothing of the target runs on a half setup
        os.write(2, f"zygote: the worker's setup failed: {exc!r}\n".encode())
        os._exit(70)


def _become(spec: dict, fds: list[int], warmed: set[str]) -> None:
    import ctypes
    import fcntl
    import resource

    from grader.sandbox.framing import REPLY_FD, REQUEST_FD

    request, reply, output = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in fds)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.dup2(request, REQUEST_FD)
    os.dup2(reply, REPLY_FD)
    os.closerange(max(REQUEST_FD, REPLY_FD) + 1, os.sysconf("SC_OPEN_MAX"))
    os.setsid()
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in spec["env"].items()})
    uid, processes = int(spec["uid"]), int(spec["processes"])
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    # POSIX message queues live as long as the zygote's IPC namespace, shared by the next
    # upload's workers in a lane, which nothing could list to remove them: none at all
    resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))
    libc = ctypes.CDLL(None, use_errno=True)
    with open("/proc/sys/kernel/cap_last_cap") as fh:
        last = int(fh.read())
    for capability in range(last + 1):
        libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    if libc.capset(header, (ctypes.c_uint32 * 6)()) != 0:  # the inheritable set, cleared
        raise OSError(ctypes.get_errno(), "capset")
    if os.getuid() != uid or os.geteuid() != uid or os.getgid() != uid:
        raise PermissionError("the uid did not change")
    os.chdir(spec["cwd"])  # the worker's own, which root without capabilities cannot enter
    libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)  # as after exec: the uid change cleared it
    # orphans of the worker's children stay in its tree: its CPU budget counts them
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()  # a fresh interpreter seeds numpy's generator from the OS
    for name in set(sys.modules) - warmed:
        del sys.modules[name]


if __name__ == "__main__":
    main()
