"""A worker's process tree, read from /proc: what it costs and who must be killed with it.

A request is charged the CPU time of the worker's whole tree, so a student cannot dodge a
deadline by forking; the same walk finds every process to kill when the worker is ended.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import weakref
from collections.abc import Sequence

_CLK_TCK = os.sysconf("SC_CLK_TCK")
_HAVE_CHILDREN_FILES = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def children(pid: int) -> list[int]:
    """The direct children of every thread of ``pid`` (none if it is gone)."""
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
        kids = children(pid) if scan is None else scan.get(pid, [])
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


def running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (neither a zombie nor dead)."""
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] not in (b"Z", b"X")


class Exit:
    """Whether one process has ended (as ``running`` tells it: a zombie has), asked often: a
    grading run asks before each request whether its forked worker and the worker's zygote
    still run. A pidfd, taken while the process is known to be that one, answers with one
    ``poll`` and stays that process's even once its pid is reused; without pidfds (an old
    kernel), ``running`` reads /proc."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._poller: select.poll | None = None
        try:
            fd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            return
        self._poller = select.poll()
        self._poller.register(fd, select.POLLIN)
        self._release = weakref.finalize(self, os.close, fd)

    def ended(self) -> bool:
        if self._poller is None:
            return not running(self.pid)
        return bool(self._poller.poll(0))

    def close(self) -> None:
        """Let go of the pidfd (``ended`` then reads /proc)."""
        if self._poller is not None:
            self._poller = None
            self._release()


def parent(pid: int) -> int | None:
    """``pid``'s parent, as /proc says."""
    fields = _stat_fields(pid)
    return int(fields[1]) if fields and len(fields) > 1 and fields[1].isdigit() else None


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


def marked_processes(marker: str) -> list[int]:
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


def signal_all(pids: Sequence[int], sig: int) -> None:
    """Send ``sig`` to each of ``pids``, skipping those already gone or not ours."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def host_pid(root: int, inner: int) -> int | None:
    """The pid, as this process sees it, of the process in ``root``'s tree whose pid in its own
    (innermost) pid namespace is ``inner``: a sandbox's processes tell their pids as they see
    them."""
    for pid in process_tree(root):
        try:
            with open(f"/proc/{pid}/status", "rb") as fh:
                lines = fh.read().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith(b"NSpid:") and int(line.split()[-1]) == inner:
                return pid
    return None


def end_sandbox(proc: subprocess.Popen) -> None:
    """Kill a bubblewrap sandbox started as ``proc``: its child is the sandbox's pid 1, whose
    death kills and reaps the namespace; bubblewrap itself is killed if that takes long."""
    if proc.poll() is None:
        signal_all(children(proc.pid), signal.SIGKILL)
        try:
            proc.wait(0.5)
        except subprocess.TimeoutExpired:
            proc.kill()  # its children die with it (--die-with-parent)
