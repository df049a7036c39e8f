"""Which zygote forks a worker (``grader.sandbox.warm``): one per grading process and thread,
or the one its lane started and shares among the runs it forks.

A batch lane (``grader.batch.lane``) and a single grade's ``--once`` lane fork their grading
runs. Each run's workers would otherwise have a zygote of their own, which costs a worker's
start again in every run; a lane's runs ask the lane instead (``use_lane``). The lane starts
the zygote a run asks for in its main thread (the sandbox dies with the thread that started
it), or before any run asks, as it warms up (``Lane.head_start``), keeps it for its next
runs, and hands each run that asks its control socket and turn file; between two uploads
it clears the zygote of whatever the last one left (``Zygote.clear``). A run whose zygote
breaks shuts its socket down: nobody asks it again, the lane ends it and starts another for
the next run, and the worker starts alone.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import select
import socket
import subprocess
import threading
from collections.abc import Sequence

from grader.sandbox.sandbox import Confinement
from grader.sandbox.warm import Zygote, ZygoteBroken

_zygotes: dict[tuple, Zygote] = {}
_registry_lock = threading.Lock()
_lane: socket.socket | None = None
"""In a lane's forked run: its end of the link to the lane (``use_lane``)."""


def _key(confinement: Confinement, argv: Sequence[str]) -> tuple | None:
    """What workers that may share a zygote have in common, or None where none forks them:
    only with bubblewrap and a uid of each worker's own (the grader runs as root); elsewhere
    a worker could signal its zygote or its siblings."""
    policy = confinement.policy
    if confinement.mode != "bwrap" or policy.uid is None or list(argv[1:2]) != ["-I"]:
        return None
    return (confinement.bwrap, dataclasses.replace(policy, uid=None), tuple(argv))


def zygote_for(confinement: Confinement, argv: Sequence[str]) -> Zygote | None:
    """The zygote that forks workers of ``argv`` under ``confinement``: the lane's in a lane's
    run, else this process and thread's, started if none works; None where workers are not
    forked or it cannot start. The caller holds it (``holders``) until ``release``."""
    key = _key(confinement, argv)
    if key is None:
        return None
    own = ("lane", *key) if _lane is not None else (os.getpid(), threading.get_ident(), *key)
    with _registry_lock:
        zygote = _zygotes.get(own)
        if zygote is None or not zygote.alive():
            zygote = (
                _ask_lane(confinement, argv) if _lane is not None else _start(confinement, argv)
            )
            if zygote is None:
                return None
            _zygotes[own] = zygote
        zygote.holders += 1
        return zygote


def release(zygote: Zygote) -> None:
    """One holder less; the last one ends the zygote (or, a lane's, lets go of it)."""
    with _registry_lock:
        zygote.holders -= 1
        if zygote.holders > 0:
            return
        for key, held in list(_zygotes.items()):
            if held is zygote:
                del _zygotes[key]
    zygote.close()


def _start(confinement: Confinement, argv: Sequence[str]) -> Zygote | None:
    try:
        return Zygote(confinement, argv)
    except (OSError, subprocess.SubprocessError):
        return None


# --------------------------------------------------------------------------- a lane's


def use_lane(link: socket.socket) -> None:
    """In a lane's forked run: ask the lane for zygotes over ``link`` (``Lane.link``)."""
    global _lane
    with _registry_lock:
        _zygotes.clear()  # the lane's own, copied by the fork: not this run's to use
        _lane = link


def _ask_lane(confinement: Confinement, argv: Sequence[str]) -> Zygote | None:
    assert _lane is not None
    try:
        _lane.send(pickle.dumps((confinement, list(argv))))  # the lane's own fork: trusted
        data, fds, _, _ = socket.recv_fds(_lane, 1 << 16, 2)
    except OSError:
        return None
    found = json.loads(data) if data else {}
    if len(fds) != 2 or "root" not in found:
        for fd in fds:
            os.close(fd)
        return None
    control = socket.socket(fileno=fds[0])
    return Zygote.adopt(confinement, control, fds[1], found["root"], found["sandbox"])


class Lane:
    """The zygotes a lane starts for its runs, in its main thread, and shares among them."""

    def __init__(self) -> None:
        self._zygotes: dict[tuple, Zygote] = {}

    @staticmethod
    def link() -> tuple[socket.socket, socket.socket]:
        """Made before a run is forked: the lane's end and the run's (``use_lane``)."""
        return socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)

    def serve(self, links: Sequence[socket.socket], pipes: Sequence[int]) -> list[bytes]:
        """Answer the runs' requests on ``links`` until every one of ``pipes`` (the runs'
        results) is closed: what each pipe carried."""
        poller = select.poll()
        carried = {fd: bytearray() for fd in pipes}
        served = {link.fileno(): link for link in links}
        for fd in (*carried, *served):
            poller.register(fd, select.POLLIN)
        waiting = set(pipes)
        while waiting:
            for fd, _ in poller.poll():
                if fd in served:
                    if not self._answer(served[fd]):
                        poller.unregister(fd)
                        del served[fd]
                elif fd in waiting:
                    chunk = os.read(fd, 1 << 16)
                    carried[fd] += chunk
                    if not chunk:
                        poller.unregister(fd)
                        waiting.discard(fd)
        return [bytes(carried[fd]) for fd in pipes]

    def head_start(self, confinement: Confinement, argv: Sequence[str]) -> bool:
        """Start now, in the lane's main thread, the zygote a run will ask for, without
        waiting for it: it imports the worker's modules while the lane warms up and forks its
        runs, whose first worker is then forked from a ready zygote. Whether one starts: none
        where workers are not forked (``_key``), nor where it cannot start (a run's request
        tries again; where that fails too, the worker starts alone)."""
        return self._zygote(confinement, argv) is not None

    def _answer(self, link: socket.socket) -> bool:
        try:
            data = link.recv(1 << 20)
        except OSError:
            return False
        if not data:
            return False
        confinement, argv = pickle.loads(data)  # noqa: S301 - from the lane's own fork
        zygote = self._zygote(confinement, argv)
        if zygote is None:
            link.send(json.dumps({}).encode())
        else:
            fds, where = zygote.handover()
            socket.send_fds(link, [json.dumps(where).encode()], fds)
        return True

    def _zygote(self, confinement: Confinement, argv: Sequence[str]) -> Zygote | None:
        key = _key(confinement, argv)
        if key is None:
            return None
        zygote = self._zygotes.get(key)
        if zygote is None or not zygote.alive():
            if zygote is not None:
                zygote.close()
            zygote = _start(confinement, argv)
            if zygote is None:
                self._zygotes.pop(key, None)
                return None
            self._zygotes[key] = zygote
        return zygote

    def clear(self) -> None:
        """After an upload's runs: each zygote cleared of what they left (``Zygote.clear``),
        or ended where that fails (the next run's request starts another)."""
        for key, zygote in list(self._zygotes.items()):
            try:
                if not zygote.alive():
                    raise ZygoteBroken("ended")
                zygote.clear()
            except (ZygoteBroken, OSError, subprocess.SubprocessError):
                zygote.close()
                del self._zygotes[key]

    def close(self) -> None:
        for zygote in self._zygotes.values():
            zygote.close()
        self._zygotes.clear()
