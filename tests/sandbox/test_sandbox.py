"""The worker launcher: confinement, deadlines, kills and the protocol, against fake runners.

Every misbehaving worker is driven by tests/sandbox_fixtures/chaos.py. Each test checks the
parent's verdict, that no process survives (every process the fixture starts carries a
per-test token on its command line; with a worker uid, no process of that uid may remain), and
where it matters that the same Worker serves the next request with a fresh worker. Bombs are
bounded: a few hundred processes, 4 GiB, children that exit by themselves after a minute.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import pickle
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.sandbox import framing, policy, process, sandbox
from grader.sandbox.framing import MAX_FRAME_BYTES
from grader.sandbox.launch import Limits, Worker, WorkerFailure
from grader.sandbox.policy import Policy
from grader.sandbox.sanitize import sanitize_message, sanitize_output
from tests.helpers import REPO_ROOT
from tests.helpers.processes import processes_with
from tests.helpers.programs import SANDBOX_MODES, needs_bwrap
from tests.helpers.sandboxes import (
    CHAOS,
    ECHO,
    FIXTURES,
    FRAMING,
    IS_ROOT,
    SITE,
    SITES,
    SMALL,
    SYSTEM_PYTHON,
    VENV,
    Factory,
    eventually,
)


@pytest.fixture
def make(tmp_path):
    factory = Factory(tmp_path)
    yield factory
    for worker in factory.workers:
        worker.close()
    factory.assert_none_left()


def _fails(worker: Worker, message: dict, budget: float = 5.0) -> tuple[WorkerFailure, float]:
    start = time.monotonic()
    with pytest.raises(WorkerFailure) as caught:
        worker.request(message, budget)
    return caught.value, time.monotonic() - start


def _still_serves(worker: Worker) -> None:
    assert worker.request({"after": "failure"}, 5.0) == {"after": "failure"}


# --------------------------------------------------------------------------- pure parts


@pytest.mark.parametrize(
    ("field", "lowest", "below"),
    [
        ("memory_mb", 256, 255),
        ("file_size_mb", 1, 0),
        ("processes", 4, 3),
        ("output_cap_bytes", 1024, 1023),
        ("reply_bytes", 1024, 1023),
        ("wall_factor", 1.0, 0.99),
    ],
)
def test_limits_are_validated_at_their_bounds(field, lowest, below):
    assert Limits() == policy.DEFAULT_LIMITS
    assert getattr(Limits(**{field: lowest}), field) == lowest
    with pytest.raises(ValueError, match=field):
        Limits(**{field: below})


def test_a_reply_cap_stays_within_a_frame():
    assert Limits(reply_bytes=MAX_FRAME_BYTES).reply_bytes == MAX_FRAME_BYTES
    with pytest.raises(ValueError, match="reply_bytes"):
        Limits(reply_bytes=MAX_FRAME_BYTES + 1)


def test_the_default_policy_is_what_the_security_model_promises():
    """Each promise of the security model (docs/security.md), and what the default policy enforces
    and reports of it: one cannot change without the other."""
    promised = " ".join((REPO_ROOT / "docs" / "security.md").read_text().split())
    default = Policy(uid=64000)
    lines = policy.protections(default, "bwrap")
    report = " ".join(lines)
    for promise, line in [
        ("2 GiB of address space", "memory limit 2048 MB (address space)"),
        ("64 MB per file", "file size limit 64 MB"),
        ("no core dumps", "no core dumps"),
        ("a 600 s CPU hard cap", "hard CPU cap 600 s per process"),
        ("capped (64 KB)", "output capped at 65536 bytes"),
        ("a wall-clock backstop (3 x budget + 5 s)", "wall-clock backstop (budget x 3 + 5 s)"),
        ("the kernel's OOM killer picks it first", "oom_score_adj 1000"),
        ("a 16 MB `/dev/shm` are writable", "(and a 16 MB /dev/shm)"),
        ("a limit of 32 processes", "process limit 32"),
    ]:
        assert promise in promised and line in report, (promise, line)
    assert "The parent parses at most a 4 MB reply" in promised
    assert default.limits.reply_bytes == 4 << 20
    assert dict(default.rlimits()) == {
        resource.RLIMIT_AS: (2048 << 20,) * 2,
        resource.RLIMIT_FSIZE: (64 << 20,) * 2,
        resource.RLIMIT_CORE: (0, 0),
        resource.RLIMIT_CPU: (600, 605),
        resource.RLIMIT_NPROC: (32, 32),
    }


def test_slots_map_to_unused_uids(monkeypatch):
    assert sandbox.uid_for_slot(0) == sandbox.BASE_UID
    assert sandbox.uid_for_slot(7) == sandbox.BASE_UID + 7
    with pytest.raises(ValueError):
        sandbox.uid_for_slot(-1)
    with pytest.raises(ValueError):
        sandbox.uid_for_slot(sandbox.MAX_SLOTS)
    monkeypatch.setattr(sandbox, "BASE_UID", 65530)
    with pytest.raises(ValueError, match="nobody"):  # 65534 is a real account
        sandbox.uid_for_slot(4)


def test_mount_plan_binds_parents_then_masks(tmp_path):
    top = tmp_path / "top"
    (top / "nested").mkdir(parents=True)
    (top / "secret").mkdir()
    (top / "answers.txt").write_text("42")
    other = tmp_path / "other"
    other.mkdir()
    args, bound, masked = policy.mount_plan(
        Policy(  # /usr/lib is visible already, and sorts first: the paths after it still bind
            readable=("/usr/lib", str(top), str(top / "nested"), str(tmp_path / "missing")),
            hidden=(str(top / "secret"), str(top / "answers.txt"), str(other), "/nonexistent"),
        )
    )
    text = " ".join(args)
    assert str(top) in bound and str(top / "nested") not in bound  # covered by its parent
    assert "missing" not in text and "/nonexistent" not in text
    assert str(other) not in text  # not visible inside, nothing to mask
    assert masked == (str(top / "answers.txt"), str(top / "secret"))
    for parent in policy.ancestors(str(top)):
        assert f"--perms 0755 --dir {parent} " in text
    bind = args.index(str(top))
    assert args[bind - 1] == "--ro-bind"
    assert args.index("--tmpfs") > bind and args[args.index("--tmpfs") + 1] == str(top / "secret")
    assert f"--ro-bind /dev/null {top / 'answers.txt'}" in text
    assert "--ro-bind /usr /usr" in text


def test_mount_plan_keeps_system_symlinks_and_masks_inside_system_folders(tmp_path):
    system = tmp_path / "system"
    (system / "secret").mkdir(parents=True)
    link = tmp_path / "link"  # as /bin -> usr/bin on a merged /usr
    link.symlink_to(system)
    args, bound, masked = policy.mount_plan(
        Policy(
            system=(str(link), str(system), str(tmp_path / "missing")),
            readable=(str(link / "secret"),),
            hidden=(str(system / "secret"),),
        )
    )
    text = " ".join(args) + " "
    assert f"--symlink {system} {link} " in text and f"--ro-bind {system} {system} " in text
    assert "missing" not in text and f"--dir {link} " not in text
    assert bound[0] == str(system) and masked == (str(system / "secret"),)


def test_parents_are_made_top_down_where_no_bound_folder_holds_them(tmp_path):
    shelf, system = tmp_path / "shelf", tmp_path / "sys" / "lib"
    (shelf / "deep").mkdir(parents=True)
    system.mkdir(parents=True)
    (tmp_path / "sys" / "share").mkdir()
    made = Policy(system=(str(system),), readable=(str(shelf), str(tmp_path / "sys" / "share")))
    args = policy.bwrap_arguments(made, str(shelf / "deep" / "scratch"), "setpriv")
    dirs = [args[i + 1] for i, arg in enumerate(args) if arg == "--dir"]
    above = policy.ancestors(str(shelf))
    assert dirs[: len(above) + 1] == [*above, str(tmp_path / "sys")]
    assert str(shelf) not in dirs and str(shelf / "deep") not in dirs  # the scratch's, bound


def test_the_uid_is_dropped_inside_only_when_the_policy_has_one(tmp_path):
    scratch = str(tmp_path / "scratch")
    without = policy.bwrap_arguments(Policy(uid=None), scratch, "setpriv")
    assert without[-1] == "--" and "setpriv" not in without and "--cap-add" not in without
    assert f"--perms 0755 --dir {tmp_path} " in " ".join(without)  # the scratch's parents
    assert without[without.index("--hostname") + 1] == "sandbox"
    dropping = policy.bwrap_arguments(Policy(uid=64001), scratch, "setpriv")
    assert dropping[dropping.index("setpriv") :] == [
        "setpriv",
        "--reuid=64001",
        "--regid=64001",
        "--clear-groups",
        "--no-new-privs",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
    ]
    assert "--hostname" not in policy.bwrap_arguments(Policy(namespaces=("net",)), scratch, "")


def test_mount_plan_makes_each_parent_once(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    args, _, _ = policy.mount_plan(Policy(readable=(str(tmp_path / "a"), str(tmp_path / "b"))))
    assert args.count(str(tmp_path)) == 1  # its --dir, made once for both


def test_a_paths_ancestors_are_the_folders_above_it_below_the_root():
    assert policy.ancestors("/a/b/c") == ["/a", "/a/b"]
    assert policy.ancestors("/a") == []


def test_failure_pickles():
    failure = pickle.loads(pickle.dumps(WorkerFailure("timeout", "timed out", "out")))
    assert (failure.kind, failure.detail, failure.output) == ("timeout", "timed out", "out")
    assert str(failure) == "timeout: timed out"


def test_sanitize_strips_escapes_and_controls():
    raw = b"\x1b[31mred\x1b[0m \x1b]0;title\x07ok\x00\x07\x1b(B\r\nline\xff\ttab\x1bc"
    assert sanitize_output(raw) == "red ok\nline\ufffd\ttab"
    # inside an answer, for a student: the same escapes go, and so does anything not ASCII
    assert sanitize_message(raw.decode(errors="replace")) == "red ok\nline\ttab"
    assert sanitize_message("é" + "x" * 400, 10) == "xxxxxxx..."


def test_protections_and_the_bwrap_command_come_from_one_policy(tmp_path):
    (tmp_path / "secret").mkdir()
    base = Policy(readable=(str(tmp_path),), hidden=(str(tmp_path / "secret"),), uid=64999)
    scratch = str(tmp_path / "scratch")

    def derived(p: Policy) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
        return (
            " ".join(policy.bwrap_arguments(p, scratch, "setpriv")),
            policy.protections(p, "bwrap"),
            policy.protections(p, "none"),
        )

    command, lines, fallback = derived(base)
    assert "--size 16777216 --tmpfs /dev/shm" in command and "--reuid=64999" in command
    assert "writable: the scratch directory only (and a 16 MB /dev/shm)" in lines
    assert "1 hidden path(s) masked" in lines and "no network (network namespace)" in lines
    assert "NO network isolation" in fallback and "NO ipc and uts namespaces" in fallback
    for change in [
        {"shm_bytes": 32 << 20},
        {"namespaces": ("pid", "uts")},
        {"uid": None},
        {"readable": ()},
        {"hidden": ()},
    ]:
        changed = derived(dataclasses.replace(base, **change))
        assert changed[0] != command and changed[1] != lines, change
    command, lines, fallback = derived(dataclasses.replace(base, namespaces=("pid", "uts")))
    assert "--unshare-net" not in command and "--unshare-ipc" not in command
    assert not any("network" in line for line in lines + fallback)
    assert "uts namespaces" in lines and "NO uts namespaces" in fallback


def test_protections_name_the_namespaces_in_the_policys_order():
    lines = policy.protections(Policy(namespaces=("pid", "net", "uts", "ipc")), "bwrap")
    pid = next(i for i, line in enumerate(lines) if line.startswith("pid namespace"))
    assert pid < lines.index("no network (network namespace)")
    assert "uts and ipc namespaces" in lines


def test_protections_say_who_the_worker_runs_as_and_what_is_missing():
    own, shared = Policy(uid=64999), Policy(uid=None, namespaces=("net", "pid"))
    assert "a worker uid of its own (unprivileged, no capabilities, no_new_privs)" in (
        policy.protections(own, "bwrap")
    )
    assert policy.protections(own, "none")[0] == "NO sandbox"
    assert "same uid as the grader (not root: cannot switch to a worker uid)" in (
        policy.protections(shared, "bwrap")
    )
    fallback = policy.protections(shared, "none", uid_note="pyenv under /root", as_root=True)
    assert (
        "runs as root (pyenv under /root): process limit NOT enforced, can read and write "
        "everything"
    ) in fallback
    assert (
        "runs as root: process limit NOT enforced, can read and write everything"
        in policy.protections(shared, "none", as_root=True)
    )
    assert not any(line.endswith("namespaces") for line in policy.protections(shared, "bwrap"))
    assert "same uid as the grader: process limit NOT enforced" in policy.protections(
        shared, "none"
    )
    assert (
        "a worker uid of its own (unprivileged, no_new_privs); stray processes of that uid are "
        "killed"
    ) in policy.protections(own, "none")
    # the slot's uid is whichever was free: two grades of one upload say the same
    for backend in ("bwrap", "none"):
        assert policy.protections(own, backend) == policy.protections(Policy(uid=64005), backend)


def test_a_reply_is_decoded_once_it_is_whole_and_alone():
    frame = framing.encode({"id": 1})
    for part in (frame[:2], frame[: framing.HEADER.size], frame[:-1]):
        assert process._reply(bytearray(part), 1024) is process._INCOMPLETE
    assert process._reply(bytearray(frame), 1024) == {"id": 1}
    with pytest.raises(process.Trouble, match="more than one reply"):
        process._reply(bytearray(frame + frame), 1024)
    with pytest.raises(process.Trouble, match="malformed reply"):
        process._reply(bytearray(frame), len(frame) - framing.HEADER.size - 1)


def test_a_frame_may_be_as_large_as_its_cap_and_no_larger():
    assert framing.body_size(framing.HEADER.pack(1024), 1024) == 1024
    with pytest.raises(framing.FrameError, match="1025 bytes exceeds the 1024 byte cap"):
        framing.body_size(framing.HEADER.pack(1025), 1024)


def test_rlimits_and_protections_come_from_one_policy():
    small = Policy(limits=Limits(memory_mb=1024, processes=8), uid=64999, cpu_cap_s=60)
    rlimits = dict(small.rlimits())
    assert rlimits[resource.RLIMIT_AS] == (1024 << 20,) * 2
    assert rlimits[resource.RLIMIT_NPROC] == (8, 8) and rlimits[resource.RLIMIT_CPU][0] == 60
    assert rlimits[resource.RLIMIT_CORE] == (0, 0)
    for mode in ("bwrap", "none"):
        lines = policy.protections(small, mode)
        assert {"memory limit 1024 MB (address space)", "process limit 8", "no core dumps"} <= set(
            lines
        )
        assert any("hard CPU cap 60 s per process" in line for line in lines)
    without_uid = dataclasses.replace(small, uid=None, core_dumps=True)
    assert resource.RLIMIT_NPROC not in dict(without_uid.rlimits())
    assert resource.RLIMIT_CORE not in dict(without_uid.rlimits())
    assert "no core dumps" not in policy.protections(without_uid, "none")
    assert "same uid as the grader: process limit NOT enforced" in policy.protections(
        without_uid, "none"
    )


WORKED = ("probe", "bwrap", 64000, ("/usr",), ("/srv/a", "/srv/b"), (), "/usr/bin/python3")
FAILED = ("probe", "none", None, ("/usr",), (), (), "/usr/bin/python3")


def test_the_probes_that_worked_travel_as_json_and_no_other(monkeypatch):
    """What a lane's fork hands back (``settled_probes``) is kept as the fork had it; a probe
    that failed is asked again, and what is not a probe is ignored."""
    monkeypatch.setattr(sandbox, "_probe_cache", {WORKED: (True, ""), FAILED: (False, "no")})
    sent = json.loads(json.dumps(sandbox.settled_probes()))
    monkeypatch.setattr(sandbox, "_probe_cache", {})
    sandbox.learn_probes(sent)
    assert sandbox._probe_cache == {WORKED: (True, "")}
    for garbage in (None, "x", [[1]], [[["probe"], [False, ""]]], [[["probe"], "ok"]]):
        sandbox.learn_probes(garbage)
    assert sandbox._probe_cache == {WORKED: (True, "")}


def test_bwrap_unavailable(make, monkeypatch):
    monkeypatch.setattr(sandbox, "_bwrap_status", (False, "pretend it is missing"))
    with pytest.raises(sandbox.SandboxUnavailable, match="pretend it is missing"):
        make("bwrap")
    worker = make("auto")
    assert worker.mode == "none"
    assert "pretend it is missing" in worker.protections[0]
    assert any("NO network isolation" in p for p in worker.protections)
    assert worker.request({"op": "info"}, 5)["env"]["GRADER_SANDBOX"] == "none"


# --------------------------------------------------------------------------- normal service


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_echo_round_trips(make, mode):
    worker = make(mode, script=ECHO)
    messages = [
        {"i": i, "text": "héllo ✓ " * (i % 7), "nested": [[i, None, True], {"x": 1.5}]}
        for i in range(200)
    ]
    for message in messages:
        assert worker.request(message, 5.0) == message
    big = {"blob": "z" * (3 << 20)}  # larger than a pipe buffer in both directions
    assert worker.request(big, 5.0) == big
    with pytest.raises(ValueError):
        worker.request({"nan": float("nan")}, 5.0)  # the caller's mistake, not the worker's
    assert worker.request({"still": "fine"}, 5.0) == {"still": "fine"}


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_inside_view(make, mode):
    worker = make(mode, limits=Limits(memory_mb=1024, file_size_mb=16, processes=24))
    info = worker.request({"op": "info"}, 5.0)
    env = info["env"]
    assert set(env) - {"PWD"} == {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "OPENBLAS_NUM_THREADS",
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "GRADER_SUBMISSION",
        "GRADER_SCRATCH",
        "GRADER_HIDDEN",
        "GRADER_SANDBOX",
        "GRADER_WORKER_ID",
    }
    assert env["HOME"] == env["GRADER_SCRATCH"] == info["cwd"]
    assert env["GRADER_SUBMISSION"] == os.path.join(info["cwd"], "submission")
    assert env["OPENBLAS_NUM_THREADS"] == "1" and env["PYTHONHASHSEED"] == "0"
    limits = info["limits"]
    assert limits["Max address space"] == str(1024 << 20)
    assert limits["Max file size"] == str(16 << 20)
    assert limits["Max core file size"] == "0"
    assert limits["Max cpu time"] == str(Policy().cpu_cap_s)
    assert info["oom_score_adj"] == "1000"
    assert info["stdin"] == "/dev/null"
    assert info["fds"] == [0, 1, 2, 3, 4, 5]  # 5: the listing itself; nothing leaked
    assert info["sid_is_pgid"]
    if worker.uid is not None:
        assert info["uid"] == info["euid"] == info["gid"] == worker.uid
        assert info["groups"] == []
        assert limits["Max processes"] == "24"
        assert info["no_new_privs"] == "1"
    if mode == "bwrap":
        assert info["cap_eff"] == "0000000000000000"
        # pid and uts namespaces: pid 1 is bubblewrap's; with a uid of its own the worker is
        # its zygote's (2) first fork
        assert info["pid"] == (2 if worker.uid is None else 3)
        assert info["hostname"] == "sandbox"
        assert any("no network" in p for p in worker.protections)
    else:
        assert any(p.startswith("NO filesystem isolation") for p in worker.protections)
        if IS_ROOT and worker.uid is None:
            assert any("process limit NOT enforced" in p for p in worker.protections)


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_numpy_imports_inside(make, mode):
    worker = make(mode)
    got = worker.request({"op": "numpy"}, 10.0)
    assert got["prefix"] == sys.prefix  # not the system Python's fallback
    assert got["sum"] == 45 and got["matmul"] == 50.0


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_submission_is_a_private_copy(make, mode):
    worker = make(mode)
    first = worker.request({"op": "info"}, 5.0)["env"]
    target = first["GRADER_SUBMISSION"] + "/engine.py"
    assert worker.request({"op": "read", "path": target}, 5.0)["content"] == "VALUE = 42\n"
    assert worker.request({"op": "write", "path": target}, 5.0)["error"] is None
    assert (make.submission / "engine.py").read_text() == "VALUE = 42\n"  # original untouched
    assert worker.request({"op": "exit_after_reply"}, 5.0) == {"bye": True}
    assert eventually(lambda: not worker.running)
    # died between requests: replaced quietly, with a fresh scratch directory and copy
    second = worker.request({"op": "info"}, 5.0)["env"]
    assert second["GRADER_SCRATCH"] != first["GRADER_SCRATCH"]
    assert not os.path.exists(first["GRADER_SCRATCH"])
    fresh = second["GRADER_SUBMISSION"] + "/engine.py"
    assert worker.request({"op": "read", "path": fresh}, 5.0)["content"] == "VALUE = 42\n"


def test_file_submission(make):
    source = make.tmp / "solution.py"
    source.write_text("ANSWER = 1\n")
    worker = make("none", submission=source)
    info = worker.request({"op": "info"}, 5.0)
    assert info["env"]["GRADER_SUBMISSION"].endswith("/solution.py")
    assert info["submission"] == "ANSWER = 1\n"


def test_quick_requests_never_poll_proc(make, monkeypatch):
    calls = []
    real = process.tree_cpu_seconds
    monkeypatch.setattr(process, "tree_cpu_seconds", lambda pid: calls.append(pid) or real(pid))
    monkeypatch.setattr(process, "CPU_POLL_GRACE_S", 3.0)  # far beyond any echo, even under load
    worker = make("none", script=ECHO)
    worker.start()
    for i in range(100):
        assert worker.request({"i": i}, 10.0) == {"i": i}
    assert calls == []
    worker = make("none")
    failure, _ = _fails(worker, {"op": "spin"}, 0.3)
    assert failure.kind == "timeout" and calls


def test_close(make):
    with make("none") as worker:
        scratch = worker.request({"op": "info"}, 5.0)["cwd"]
        assert worker.running and os.path.isdir(scratch)
    assert not worker.running and not os.path.exists(scratch)
    worker.close()  # idempotent
    with pytest.raises(RuntimeError):
        worker.request({}, 1.0)


@pytest.mark.skipif(not IS_ROOT, reason="slots (worker uids) exist only for root")
@needs_bwrap
def test_a_slot_serves_one_worker_at_a_time(make):
    first = make("bwrap")
    with pytest.raises(sandbox.SlotBusy):
        Worker(
            [sys.executable, "-I", str(CHAOS)],
            submission=make.submission,
            readable=[VENV, *SITES, FIXTURES, FRAMING],
            hidden=[],
            sandbox="bwrap",
            slot=first.uid - sandbox.BASE_UID,
        )
    first.close()
    again = Worker(
        [sys.executable, "-I", str(CHAOS), make.token],
        submission=make.submission,
        readable=[VENV, *SITES, FIXTURES, FRAMING],
        hidden=[],
        sandbox="bwrap",
        slot=first.uid - sandbox.BASE_UID,
    )
    make.workers.append(again)
    assert again.request({"ok": 1}, 5.0) == {"ok": 1}


# --------------------------------------------------------------------------- deadlines


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_busy_loop_hits_the_cpu_deadline(make, mode):
    """The detail says the CPU deadline ended it, not the wall-clock backstop, which is set
    far off: however loaded the machine, 0.5 s of CPU time comes first."""
    worker = make(mode, limits=Limits(memory_mb=1024, wall_factor=100.0))
    worker.start()
    failure, _ = _fails(worker, {"op": "spin"}, 0.5)
    assert failure.kind == "timeout"
    assert failure.detail == "timed out after 0.5 s of CPU time"
    make.assert_none_left()
    _still_serves(worker)


@pytest.mark.slow
@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_sleeping_worker_hits_the_wall_backstop(make, mode):
    worker = make(mode, limits=Limits(memory_mb=1024, wall_factor=1.0))
    failure, elapsed = _fails(worker, {"op": "sleep"}, 0.2)
    assert failure.kind == "timeout"
    assert "wall-clock" in failure.detail and "5.2 s" in failure.detail
    assert 5.2 <= elapsed < 5.2 + 10  # then the kill, with room for a loaded machine
    make.assert_none_left()
    _still_serves(worker)


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_half_a_frame_then_spinning(make, mode):
    worker = make(mode)
    failure, _ = _fails(worker, {"op": "raw", "hex": "00000064" + "7b22" * 5, "then": "spin"}, 0.4)
    assert failure.kind == "timeout" and "CPU" in failure.detail
    make.assert_none_left()
    _still_serves(worker)


@pytest.mark.slow
def test_half_a_frame_then_sleeping(make):
    worker = make("none", limits=Limits(memory_mb=1024, wall_factor=1.0))
    failure, elapsed = _fails(
        worker, {"op": "raw", "hex": "00000064" + "7b22", "then": "sleep"}, 0.2
    )
    assert failure.kind == "timeout" and "wall-clock" in failure.detail
    assert elapsed < 5.2 + 10  # the backstop, then the kill, with room for a loaded machine
    _still_serves(worker)


# --------------------------------------------------------------------------- deaths


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_segfault(make, mode):
    worker = make(mode)
    failure, _ = _fails(worker, {"op": "segfault"})
    assert failure.kind == "crashed"
    assert failure.detail == "crashed (killed by signal 11: segmentation fault)"
    _still_serves(worker)


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_exit_code(make, mode):
    worker = make(mode)
    failure, _ = _fails(worker, {"op": "exit", "code": 3})
    assert (failure.kind, failure.detail) == ("crashed", "crashed (exit code 3)")
    failure, _ = _fails(worker, {"op": "exit", "code": 0})
    assert (failure.kind, failure.detail) == ("crashed", "exited (exit code 0) without replying")
    _still_serves(worker)


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_memory_limit(make, mode):
    worker = make(mode)
    failure, _ = _fails(worker, {"op": "alloc", "bytes": 4 << 30})
    assert failure.kind == "crashed"
    assert failure.detail == "exceeded the memory limit (1024 MB)"
    assert "MemoryError" in failure.output
    _still_serves(worker)
    assert worker.request({"op": "alloc", "bytes": 64 << 20}, 5.0) == {"allocated": 64 << 20}


# --------------------------------------------------------------------------- process bombs


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_fork_bomb_is_contained_and_killed(make, mode):
    worker = make(mode)
    got = worker.request({"op": "fork", "n": 200}, 10.0)
    if worker.uid is not None:  # the process limit bites
        assert got["forked"] < SMALL.processes and got["errno"] == errno.EAGAIN
    else:  # root without a uid of its own: nothing stops the forks, the kill must get them all
        assert got == {"forked": 200, "errno": None}
    assert len(processes_with(make.token)) >= got["forked"]
    failure, _ = _fails(worker, {"op": "spin"}, 0.3)
    assert failure.kind == "timeout"
    make.assert_none_left()
    _still_serves(worker)  # the uid's process count is back to zero


@pytest.mark.parametrize("mode", SANDBOX_MODES)
@pytest.mark.parametrize("then", ["spin", "exit", "close"])
def test_setsid_daemon_does_not_survive(make, mode, then):
    worker = make(mode)
    assert worker.request({"op": "daemon"}, 5.0) == {"daemon": True}
    assert len(processes_with(make.token)) >= 2  # the worker and its detached grandchild
    if then == "spin":
        assert _fails(worker, {"op": "spin"}, 0.3)[0].kind == "timeout"
    elif then == "exit":  # the worker dies first, leaving the daemon behind
        assert _fails(worker, {"op": "exit"})[0].kind == "crashed"
    else:
        worker.close()
    make.assert_none_left()
    if then != "close":
        _still_serves(worker)


# --------------------------------------------------------------------------- output and files


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_ten_megabytes_of_output(make, mode):
    worker = make(mode)
    assert worker.request({"op": "print", "bytes": 10 << 20}, 10.0) == {"printed": 10 << 20}
    excerpt = eventually(lambda: (text := worker.output_excerpt()).endswith("the end \n") and text)
    assert excerpt, worker.output_excerpt()[-200:]
    assert len(excerpt) <= SMALL.output_cap_bytes + 100
    assert excerpt.startswith("red  bell nul start\n")  # escapes and controls are gone
    assert "bytes omitted" in excerpt
    assert all(ch in "\n\t" or ch.isprintable() for ch in excerpt)
    _still_serves(worker)


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_file_size_limit(make, mode):
    worker = make(mode, limits=Limits(memory_mb=1024, file_size_mb=8))
    got = worker.request({"op": "write_file", "bytes": 200 << 20}, 10.0)
    assert got == {"written": 8 << 20, "errno": errno.EFBIG}


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_failure_keeps_the_output(make, mode):
    worker = make(mode)
    worker.request({"op": "stderr", "text": "\x1b[1mTraceback\x1b[0m: my bug\n"}, 5.0)
    failure, _ = _fails(worker, {"op": "exit", "code": 1})
    assert "Traceback: my bug" in failure.output
    assert worker.output_excerpt() == failure.output  # until the next worker starts


# --------------------------------------------------------------------------- protocol


@pytest.mark.parametrize("mode", SANDBOX_MODES)
@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        ("ffffffff", f"exceeds the {Limits().reply_bytes} byte cap"),
        ("00000003" + "7b7b7b", "not valid JSON"),
        ("00000002" + "7b7d" + "00000002" + "7b7d", "more than one reply"),
    ],
)
def test_garbage_on_the_reply_channel(make, mode, raw, detail):
    worker = make(mode)
    failure, _ = _fails(worker, {"op": "raw", "hex": raw})
    assert failure.kind == "invalid" and detail in failure.detail
    make.assert_none_left()
    _still_serves(worker)


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_unsolicited_reply(make, mode):
    worker = make(mode)
    scratch = Path(worker.request({"op": "info"}, 5.0)["cwd"])
    assert worker.request({"op": "late"}, 5.0) == {"on_time": True}
    assert eventually((scratch / "late-sent").exists)  # the late frame is in the pipe
    failure, _ = _fails(worker, {"next": 1})
    assert failure.kind == "invalid" and "without being asked" in failure.detail
    _still_serves(worker)


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_closed_reply_channel(make, mode):
    worker = make(mode)
    failure, elapsed = _fails(worker, {"op": "close_reply"}, 60.0)
    assert (failure.kind, failure.detail) == ("invalid", "closed its reply channel")
    # seen at once, not at the backstop (185 s; the worker sleeps on): a bound no load reaches
    assert elapsed < 60.0
    make.assert_none_left()
    _still_serves(worker)


# --------------------------------------------------------------------------- isolation


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_network(make, mode):
    worker = make(mode)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        got = worker.request(
            {"op": "connect", "host": "127.0.0.1", "port": server.getsockname()[1]}, 5.0
        )
    if mode == "bwrap":
        assert not got["connected"], got
    else:  # observed, and said plainly
        assert got["connected"]
        assert "NO network isolation" in worker.protections


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_hidden_paths(make, mode):
    course = make.tmp / "course"
    (course / "suites").mkdir(parents=True)
    (course / "suites" / "hidden_test.py").write_text("SECRET = 1\n")
    (course / "reference.py").write_text("SOLUTION = 2\n")
    (course / "public.py").write_text("PUBLIC = 3\n")
    for path in (make.tmp, course, course / "suites"):
        path.chmod(0o755)
    os.symlink(course / "reference.py", make.submission / "leak.py")
    torch_dir = SITE / "torch"
    worker = make(
        mode, readable=[course], hidden=[course / "suites", course / "reference.py", torch_dir]
    )
    info = worker.request({"op": "info"}, 5.0)
    assert info["env"]["GRADER_HIDDEN"].split(os.pathsep) == sorted(
        str(p) for p in (course / "suites", course / "reference.py", torch_dir)
    )
    public = worker.request({"op": "read", "path": str(course / "public.py")}, 5.0)
    assert public["content"] == "PUBLIC = 3\n"
    secrets = [
        str(course / "suites" / "hidden_test.py"),
        str(course / "reference.py"),
        info["env"]["GRADER_SUBMISSION"] + "/leak.py",
    ]  # a symlink stays a symlink
    if torch_dir.exists():
        secrets.append(str(torch_dir / "__init__.py"))
    for path in secrets:
        got = worker.request({"op": "read", "path": path}, 5.0)
        if mode == "bwrap":
            assert got["content"] is None, path
        else:  # fallback: visible; only the runner's import blocker stands in the way
            assert got["content"] is not None, path
    assert os.path.islink(info["env"]["GRADER_SUBMISSION"] + "/leak.py")


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_writes_outside_scratch(make, mode):
    """The shelf is world-writable, so only a read-only mount can refuse the worker's write
    (as root, its uid of its own would refuse a root-owned shelf whatever the mount)."""
    shelf = make.tmp / "shelf"
    shelf.mkdir()
    make.tmp.chmod(0o755)
    shelf.chmod(0o777)
    worker = make(mode, readable=[shelf])
    inside = worker.request({"op": "write", "path": "notes.txt"}, 5.0)
    assert inside["error"] is None
    planted, host_tmp = shelf / "planted.py", Path("/tmp") / f"{make.token}.txt"
    try:
        for target in (planted, host_tmp):
            got = worker.request({"op": "write", "path": str(target)}, 5.0)
            if mode == "bwrap":
                assert got["error"] in ("OSError", "PermissionError"), got
                if target == planted:  # refused by the mount, not by the worker's uid
                    assert got["errno"] == "EROFS", got
                assert not target.exists()
            else:  # fallback: nothing stops it, as the protections say
                assert got["error"] is None and target.exists()
    finally:
        for target in (planted, host_tmp):
            target.unlink(missing_ok=True)


@pytest.mark.skipif(
    not (IS_ROOT and SYSTEM_PYTHON.exists()),
    reason="needs root and a system Python that an unprivileged uid can run",
)
def test_fallback_drops_to_the_slot_uid_when_it_can(make):
    worker = make("none", python=SYSTEM_PYTHON)  # the fixture needs no numpy
    assert worker.uid is not None
    assert any(p.startswith("a worker uid of its own") for p in worker.protections)
    info = worker.request({"op": "info"}, 5.0)
    assert info["uid"] == worker.uid and info["no_new_privs"] == "1"
    got = worker.request({"op": "fork", "n": 200}, 10.0)
    assert got["forked"] < SMALL.processes and got["errno"] == errno.EAGAIN
    assert _fails(worker, {"op": "spin"}, 0.3)[0].kind == "timeout"
    make.assert_none_left()
    _still_serves(worker)


@pytest.mark.parametrize(
    ("written", "returned"),
    [
        (framing.encode({"files": {}}), {"files": {}}),
        (framing.encode({"files": {}})[:-1], None),
        (b"", None),
    ],
)
def test_a_worker_seen_dead_after_replying_gives_its_reply(monkeypatch, written, returned):
    """A one-shot worker (the unpacker) writes its reply and exits; on a loaded machine the
    parent may see it dead before reading the reply. The reply is its answer all the same; a
    partial one, or none, is a death."""
    exited = subprocess.Popen(["true"])
    exited.wait()
    replies, channel = os.pipe()
    os.write(channel, written)
    os.close(channel)
    unused, requests = os.pipe()
    os.set_blocking(replies, False)
    generation = object.__new__(process.Generation)
    generation.proc, generation.rep_r, generation.req_w = exited, replies, requests
    generation.reply_cap = 1 << 20
    monkeypatch.setattr(process, "CPU_POLL_GRACE_S", 0.0)  # the death is seen first
    try:
        if returned is None:
            with pytest.raises(process.Trouble, match="died"):
                generation.exchange(b"", 1.0, 2.0)
        else:
            assert generation.exchange(b"", 1.0, 2.0) == returned
    finally:
        for fd in (replies, unused, requests):
            os.close(fd)
