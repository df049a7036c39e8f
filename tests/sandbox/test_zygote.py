"""Workers forked from a zygote (``grader.sandbox.warm``): attacks aimed at the design.

A zygote serves the workers of one grading process that share a confinement, or of every run
a lane forks (``grader.sandbox.sharing``: here the test plays the lane and forks the runs),
upload after upload; each worker it forks has the uid of its own Worker's slot. Every worker
here runs tests/sandbox_fixtures/attacker.py, which runs the code each request carries, as
student code would run. The catalog of tests/sandbox/test_sandbox.py and
tests/worker/test_hostile.py runs against forked workers too (where workers are forked:
bubblewrap, as root).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import textwrap

import pytest

from grader.sandbox import proctree, sharing, warm
from grader.sandbox.launch import Worker, WorkerFailure
from tests.helpers.programs import needs_bwrap
from tests.helpers.sandboxes import FIXTURES, IS_ROOT, Factory, eventually

ATTACKER = FIXTURES / "attacker.py"
pytestmark = [
    needs_bwrap,
    pytest.mark.skipif(not IS_ROOT, reason="workers are forked only with a uid of their own"),
]


@pytest.fixture
def make(tmp_path):
    factory = Factory(tmp_path)
    yield lambda: factory("bwrap", script=ATTACKER)
    for worker in factory.workers:
        worker.close()
    factory.assert_none_left()


def run(worker: Worker, code: str, budget: float = 5.0) -> dict:
    return worker.request({"code": textwrap.dedent(code)}, budget)


def forked(worker: Worker) -> bool:
    generation = worker._resources.generation
    return generation is not None and isinstance(generation.proc, warm.Forked)


def test_workers_of_one_confinement_are_forks_of_one_zygote(make):
    first, second = make(), make()
    first.start()  # its zygote warms up; the fork waits for the first request
    assert first._resources.generation is None and first._resources.zygotes
    assert run(first, "reply['ok'] = 1") == run(second, "reply['ok'] = 1") == {"ok": 1}
    assert forked(first) and forked(second)
    assert first._resources.zygotes == second._resources.zygotes
    assert first.uid != second.uid


def test_a_worker_cannot_signal_its_zygote_nor_a_sibling(make):
    attacker, sibling = make(), make()
    sibling_pid = run(sibling, "import os; reply['pid'] = os.getpid()")["pid"]
    tried = run(
        attacker,
        f"""
        import os, signal
        for pid in (1, 2, {sibling_pid}):  # bubblewrap's init, the zygote, the sibling
            try:
                os.kill(pid, signal.SIGKILL)
                reply[str(pid)] = 'killed'
            except OSError as exc:
                reply[str(pid)] = type(exc).__name__
        """,
    )
    assert tried == dict.fromkeys(("1", "2", str(sibling_pid)), "PermissionError")
    # every process it may signal: its own uid's, none here but itself, which kill(-1) spares
    everyone = "import os, signal; os.kill(-1, signal.SIGKILL); reply['alive'] = 1"
    assert run(attacker, everyone) == {"alive": 1}
    assert run(sibling, "import os; reply['pid'] = os.getpid()") == {"pid": sibling_pid}
    with pytest.raises(WorkerFailure) as failure:
        run(attacker, "import os; os._exit(3)")
    assert failure.value.kind == "crashed"
    assert run(attacker, "reply['again'] = 1") == {"again": 1}  # forked afresh, same zygote
    assert forked(attacker)
    assert attacker._resources.zygotes == sibling._resources.zygotes


def test_a_worker_cannot_reach_the_zygotes_control_socket(make):
    worker = make()
    tried = run(
        worker,
        """
        import ctypes, os
        for path in ('/proc/2/fd', '/proc/2/fd/3', '/proc/2/environ', '/proc/2/mem'):
            try:
                if path.endswith('/fd'):
                    os.listdir(path)
                else:
                    open(path, 'rb').read(1)
                reply[path] = 'reached'
            except OSError as exc:
                reply[path] = type(exc).__name__
        reply['own'] = [os.readlink(f'/proc/self/fd/{fd}')[:5] for fd in (3, 4)]
        reply['fds'] = sorted(int(fd) for fd in os.listdir('/proc/self/fd'))
        ptrace = ctypes.CDLL(None, use_errno=True).ptrace
        ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        reply['ptrace'] = ptrace(16, 2, None, None) == -1 and ctypes.get_errno()  # ATTACH
        """,
    )
    assert tried == {
        "/proc/2/fd": "PermissionError",
        "/proc/2/fd/3": "PermissionError",
        "/proc/2/environ": "PermissionError",
        "/proc/2/mem": "PermissionError",
        "own": ["pipe:", "pipe:"],  # its channel: pipes of its own, no socket
        "fds": [0, 1, 2, 3, 4, 5],  # 5: the listing itself
        "ptrace": 1,  # EPERM
    }


def test_a_module_changed_by_a_worker_is_not_seen_by_the_next(make):
    worker, sibling = make(), make()
    run(
        worker,
        """
        import builtins, os, sys
        os.planted = builtins.planted = 1
        sys.modules['planted'] = os
        sys.path.insert(0, '/planted')
        """,
    )
    with pytest.raises(WorkerFailure):
        run(worker, "import os; os._exit(3)")
    look = """
        import builtins, os, sys
        reply['seen'] = [hasattr(os, 'planted'), hasattr(builtins, 'planted'),
                         'planted' in sys.modules, '/planted' in sys.path]
        """
    assert run(worker, look) == run(sibling, look) == {"seen": [False] * 4}
    assert forked(worker) and forked(sibling)


def test_files_a_worker_leaves_are_gone_or_out_of_reach(make):
    """Its scratch: its own (mode 0700, its uid), deleted when it ends, as a worker started
    alone has. /dev/shm is the zygote's, so one upload's workers share it while they run
    (mode 1777: a file there is another's only as its mode allows); what a worker left there
    is removed when it ends."""
    worker, sibling = make(), make()
    left = run(
        worker,
        """
        import os
        reply['scratch'] = os.path.join(os.environ['HOME'], 'left.txt')
        for path in (reply['scratch'], '/dev/shm/left.txt'):
            with open(path, 'w') as fh:
                fh.write('left')
        os.chmod('/dev/shm/left.txt', 0o600)
        """,
    )
    look = f"""
        import os
        for path in ({left["scratch"]!r}, '/dev/shm/left.txt'):
            try:
                reply[path] = open(path).read()
            except OSError as exc:
                reply[path] = type(exc).__name__
        """
    out_of_reach = dict.fromkeys((left["scratch"], "/dev/shm/left.txt"), "PermissionError")
    assert run(sibling, look) == out_of_reach
    with pytest.raises(WorkerFailure):
        run(worker, "import os; os._exit(3)")
    gone = dict.fromkeys((left["scratch"], "/dev/shm/left.txt"), "FileNotFoundError")
    assert run(worker, look) == gone  # its next worker, same uid
    assert run(sibling, look) == gone


def test_a_fork_bomb_or_a_hang_does_not_stop_the_next_fork(make):
    bomber = make()
    with pytest.raises(WorkerFailure) as failure:
        run(
            bomber,
            """
            import os, time
            while True:  # until the process limit of its uid stops it, then spin
                try:
                    if os.fork() == 0:
                        time.sleep(60)
                        os._exit(0)
                except OSError:
                    while True:
                        pass
            """,
            budget=1.0,
        )
    assert failure.value.kind == "timeout"
    other = make()  # forked while none of the bomb's processes may be left
    assert run(other, "reply['ok'] = 1") == {"ok": 1}
    assert run(bomber, "reply['ok'] = 1") == {"ok": 1}
    with pytest.raises(WorkerFailure) as failure:
        run(bomber, "while True: pass", budget=0.5)
    assert failure.value.kind == "timeout"
    assert run(bomber, "reply['ok'] = 1") == {"ok": 1}
    assert forked(bomber) and forked(other)


def test_a_zygote_that_dies_is_replaced(make):
    worker = make()
    assert run(worker, "reply['ok'] = 1") == {"ok": 1}
    (zygote,) = worker._resources.zygotes
    os.kill(zygote.pid, signal.SIGKILL)
    assert eventually(lambda: not proctree.running(zygote.pid))
    # its fork is taken for dead (its pid reaped by another) between requests, and replaced
    assert run(worker, "reply['ok'] = 1") == {"ok": 1}
    assert zygote.broken
    assert worker._resources.generation.proc.zygote is not zygote
    assert run(make(), "reply['ok'] = 1") == {"ok": 1}


def test_a_zygote_that_cannot_start_leaves_its_workers_to_start_alone(make, monkeypatch):
    monkeypatch.setattr(warm, "MODULE", "no.such.zygote")
    worker = make()
    assert run(worker, "reply['ok'] = 1") == {"ok": 1}
    assert isinstance(worker._resources.generation.proc, subprocess.Popen)


# --------------------------------------------------------------------------- a lane's zygote


def _run_in_lane(lane: sharing.Lane, factory: Factory, slot: int, code: str) -> dict:
    """``code`` run by a worker on ``slot`` in a grading run forked as a lane forks its runs
    (``grader.batch.lane``), which asks the lane for its zygote and then exits at once, as a
    run that crashed would, closing nothing; the lane clears the zygote afterwards."""
    readable, writable = os.pipe()
    ours, theirs = sharing.Lane.link()
    pid = os.fork()
    if pid == 0:  # the run: whatever happens, it reports and exits
        try:
            os.close(readable)
            sharing.use_lane(theirs)
            worker = factory("bwrap", script=ATTACKER, slot=slot)
            try:
                found = run(worker, code)
            except WorkerFailure as failure:
                found = {"failure": failure.kind}
            proc = worker._resources.generation.proc
            found["zygote"] = proc.zygote.sandbox if isinstance(proc, warm.Forked) else None
            os.write(writable, json.dumps(found).encode())
        finally:
            os._exit(0)
    os.close(writable)
    theirs.close()
    (carried,) = lane.serve([ours], [readable])
    os.close(readable)
    ours.close()
    os.waitpid(pid, 0)
    lane.clear()
    return json.loads(carried)


@pytest.fixture
def lane(tmp_path):
    factory = Factory(tmp_path)
    zygotes = sharing.Lane()
    yield zygotes, factory, factory.slot()
    zygotes.close()
    factory.assert_none_left()


LEAVE = """
    import ctypes, os, time
    libc = ctypes.CDLL(None, use_errno=True)
    for path in ('/dev/shm/left', os.path.join(os.environ['HOME'], 'left')):
        with open(path, 'w') as fh:
            fh.write('upload A')
        os.chmod(path, 0o666)
    os.mkdir('/dev/shm/dir', 0o777)
    reply['scratch'] = os.environ['HOME']
    reply['shm'] = libc.shmget(0x5EED, 4096, 0o1666)  # IPC_CREAT, readable by all
    reply['sem'] = libc.semget(0x5EED, 1, 0o1666)
    reply['mq'] = libc.mq_open(b'/left', 0o100 | 0o2, 0o666, None)  # O_CREAT | O_RDWR
    try:
        open('/tmp/left', 'w')
        reply['tmp'] = 'written'
    except OSError as exc:
        reply['tmp'] = type(exc).__name__
    if os.fork() == 0:  # a process left running, out of its session
        os.setsid()
        time.sleep(60)
        os._exit(0)
    os.planted = 'upload A'
"""

LOOK = """
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    reply['shm_dir'] = sorted(os.listdir('/dev/shm'))
    reply['scratch'] = os.path.exists({scratch!r})
    reply['shm'] = libc.shmget(0x5EED, 0, 0)
    reply['sem'] = libc.semget(0x5EED, 0, 0)
    reply['mq'] = libc.mq_open(b'/left', 0o2)
    me = os.getuid()
    reply['processes'] = [
        pid for pid in os.listdir('/proc')
        if pid.isdigit() and int(pid) != os.getpid() and os.stat(f'/proc/{{pid}}').st_uid == me
    ]
    reply['planted'] = hasattr(os, 'planted')
"""


def test_the_next_upload_in_a_lane_finds_nothing_of_the_last(lane):
    """Upload A's run leaves files in /dev/shm and its scratch, System V IPC objects, a
    process out of its session and a changed module, then exits closing nothing; upload B's
    worker, forked by the same zygote on the same slot (the same uid), finds none of it."""
    zygotes, factory, slot = lane
    left = _run_in_lane(zygotes, factory, slot, LEAVE)
    assert left["zygote"] is not None
    assert left["shm"] >= 0 and left["sem"] >= 0  # made: they are the zygote's namespace's
    assert left["mq"] == -1 and left["tmp"] == "PermissionError"  # never made at all
    seen = _run_in_lane(zygotes, factory, slot, LOOK.format(scratch=left["scratch"]))
    assert seen == {
        "shm_dir": [],
        "scratch": False,
        "shm": -1,
        "sem": -1,
        "mq": -1,
        "processes": [],
        "planted": False,
        "zygote": left["zygote"],  # the lane's one zygote forked both
    }


def test_runs_forked_at_once_share_the_lanes_zygote_one_order_at_a_time(lane):
    """A single grade's two runs (``--once``) ask at once: one zygote serves both, and each
    order's answer is its own."""
    zygotes, factory, slot = lane
    readable, writable = os.pipe()
    links, pids = [], []
    for n in range(2):
        ours, theirs = sharing.Lane.link()
        pid = os.fork()
        if pid == 0:
            try:
                sharing.use_lane(theirs)
                worker = factory("bwrap", script=ATTACKER, slot=slot + 1 + n)
                replies = []
                for i in range(20):
                    if i % 5 == 4:  # a crash: the next request needs a fresh fork
                        with contextlib.suppress(WorkerFailure):
                            run(worker, "import os; os._exit(3)")
                    replies.append(run(worker, f"reply['n'] = {n * 100 + i}")["n"])
                zygote = worker._resources.generation.proc.zygote.sandbox
                os.write(writable, json.dumps([n, replies, zygote]).encode() + b"\n")
                worker.close()
            finally:
                os._exit(0)
        theirs.close()
        links.append(ours)
        pids.append(pid)
    os.close(writable)
    (carried,) = zygotes.serve(links, [readable])
    for pid in pids:
        os.waitpid(pid, 0)
    found = sorted(json.loads(line) for line in carried.splitlines())
    assert [replies for _, replies, _ in found] == [list(range(20)), list(range(100, 120))]
    assert found[0][2] == found[1][2] is not None


def test_a_late_answer_is_never_taken_for_the_next_orders(make):
    """An answer to an order nobody waits for any more (one that timed out): the next order
    reads it first, sees it is not its own, and that zygote is never asked again."""
    worker = make()
    assert run(worker, "reply['ok'] = 1") == {"ok": 1}
    (zygote,) = worker._resources.zygotes
    zygote._socket.send(json.dumps({"wait": 99999, "id": "timed out"}).encode())  # unread
    with pytest.raises(WorkerFailure):
        run(worker, "import os; os._exit(3)")
    assert run(worker, "reply['ok'] = 1") == {"ok": 1}
    assert zygote.broken
    proc = worker._resources.generation.proc
    assert not isinstance(proc, warm.Forked) or proc.zygote is not zygote
