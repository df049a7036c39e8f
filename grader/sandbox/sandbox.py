"""How an untrusted worker is confined: the mode, the child's setup, uids and probing.

This module only *decides*; ``process.py`` runs the worker, talks to it, times it and kills it.
What confines it is the ``Policy`` of ``policy.py``, from which bubblewrap's command line, the
rlimits and each report's ``protections`` are derived. Two modes (``confine(..., sandbox=...)``
picks one, ``"auto"`` probes once and caches):

``bwrap``
    bubblewrap enforces the whole policy: a private filesystem view, no network, its own
    namespaces, and (as root) the worker's own uid. Killing the sandbox's pid-1 kills every
    process in it, ``setsid()`` daemons included.

``none``
    A plain subprocess in its own session with the same rlimits and environment. Nothing
    isolates the filesystem or the network; ``hidden`` paths are only handed to the runner (which
    blocks imports) in ``GRADER_HIDDEN``. As root, the worker drops to the slot's uid only if the
    interpreter works as that uid (a probe checks; a pyenv under ``/root`` does not), which
    makes ``RLIMIT_NPROC`` bite and lets the parent sweep stray processes with ``kill(-1)``.
    ``protections`` says plainly what is not in force.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import fcntl
import json
import os
import pwd
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from grader.sandbox.policy import (
    SAFE_PATH,
    Limits,
    Policy,
    bwrap_arguments,
    is_under,
    protections,
)
from grader.sandbox.sanitize import last_line

MODES = ("auto", "bwrap", "none")
BASE_UID = 64000
MAX_SLOTS = 1000
_PROBE_TIMEOUT_S = 30.0
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38


class SandboxUnavailable(RuntimeError):
    """``sandbox="bwrap"`` was asked for but does not work here (the message says why)."""


class SlotBusy(RuntimeError):
    """Another live Worker (in this or another process) holds the same slot."""


# --------------------------------------------------------------------------- uid allocation


def uid_for_slot(slot: int) -> int:
    """The dedicated uid of a slot: one per parallel worker, since RLIMIT_NPROC counts per uid."""
    if not isinstance(slot, int) or isinstance(slot, bool) or not 0 <= slot < MAX_SLOTS:
        raise ValueError(f"slot must be an int in [0, {MAX_SLOTS}), got {slot!r}")
    uid = BASE_UID + slot
    try:
        entry = pwd.getpwuid(uid)
    except KeyError:
        return uid
    raise ValueError(
        f"uid {uid} (slot {slot}) belongs to the account {entry.pw_name!r}; the worker uids "
        f"{BASE_UID}..{BASE_UID + MAX_SLOTS - 1} must not be real accounts (their processes "
        "get killed)"
    )


def _lock_dir() -> Path:
    path = Path(tempfile.gettempdir()) / f"grader-slots-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise RuntimeError(f"{path} is not a private directory of uid {os.getuid()}")
    return path


class SlotLock:
    """An exclusive ``flock`` on the slot's uid while a Worker may run processes as it.

    Sweeping a uid with ``kill(-1)`` would kill another grader's worker using the same slot;
    the lock turns that mistake into a clear error instead.
    """

    def __init__(self, uid: int) -> None:
        self.uid = uid
        path = _lock_dir() / f"uid-{uid}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SlotBusy(
                f"uid {uid} (slot {uid - BASE_UID}) is in use by another Worker; give each "
                "parallel Worker its own slot"
            ) from None
        self._fd: int | None = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the flock


def sweep_uid(uid: int) -> None:
    """SIGKILL every process of ``uid`` on the machine (``kill(-1)`` run as that uid).

    Only for a dedicated worker uid whose slot we hold; needs root. Without a pid namespace this
    is what catches ``setsid()`` daemons that left the worker's process tree.
    """
    if os.geteuid() != 0 or uid < BASE_UID:
        return
    kill = shutil.which("kill", path="/usr/bin:/bin")
    if kill is None:
        return
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            [kill, "-KILL", "-1"],
            user=uid,
            group=uid,
            extra_groups=[],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            timeout=10,
            env={},
        )


# --------------------------------------------------------------------------- the child side


def _libc_prctl() -> Callable[..., int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


_PRCTL = _libc_prctl()


def _make_child_setup(
    policy: Policy, *, channel: tuple[int, int] | None, drop_to: int | None, subreaper: bool
) -> Callable[[], None]:
    """The ``preexec_fn``: runs in the forked child just before ``exec``.

    Kept to plain system calls (no imports, no locks). ``subprocess`` closes inherited fds
    only *after* ``preexec_fn``, so this runs with ``close_fds=False`` and does that job
    itself: the two channel ends go to the policy's fds, every other fd above 2 is
    close-on-exec.
    """
    prctl = _PRCTL
    req, rep = channel if channel is not None else (-1, -1)
    request_fd, reply_fd = policy.channel
    keep = {0, 1, 2, request_fd, reply_fd} if channel is not None else {0, 1, 2}
    rlimits = policy.rlimits()
    oom_score_adj = str(policy.oom_score_adj).encode()

    def setup() -> None:
        if channel is not None:
            high_req = fcntl.fcntl(req, fcntl.F_DUPFD, 10)
            high_rep = fcntl.fcntl(rep, fcntl.F_DUPFD, 10)
            os.dup2(high_req, request_fd)
            os.dup2(high_rep, reply_fd)
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            if fd not in keep:
                with contextlib.suppress(OSError):
                    os.set_inheritable(fd, False)
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
        try:
            os.write(fd, oom_score_adj)
        finally:
            os.close(fd)
        for which, value in rlimits:
            resource.setrlimit(which, value)
        if drop_to is not None:
            os.setgroups([])
            os.setresgid(drop_to, drop_to, drop_to)
            os.setresuid(drop_to, drop_to, drop_to)
        if prctl is not None:
            if subreaper:  # fallback: orphans of the worker's children stay in its tree
                prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
                prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # no setuid binaries (bwrap: setpriv)
            # after the uid change, which would clear it; bwrap sets its own
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return setup


# --------------------------------------------------------------------------- paths


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(path))


def interpreter_roots(argv0: str) -> list[str]:
    """Directories the interpreter needs, besides /usr: its installation prefix."""
    exe = _real(shutil.which(argv0) or argv0)
    roots = []
    for prefix in {_real(sys.base_prefix), _real(sys.base_exec_prefix)}:
        if is_under(exe, prefix):
            roots.append(prefix)
    if not roots:
        prefix = os.path.dirname(os.path.dirname(exe))
        if prefix not in ("", "/") and not is_under(prefix, "/usr"):
            roots.append(prefix)
    return sorted(set(roots))


# --------------------------------------------------------------------------- the confinement


@dataclasses.dataclass(frozen=True)
class Confinement:
    """A policy and the mode that enforces it: everything needed to start a worker generation."""

    mode: str  # "bwrap" or "none"
    policy: Policy
    bwrap: str | None = None  # bubblewrap's path (mode "bwrap")
    note: str = ""  # why bwrap is not used (mode "none" under "auto")
    uid_note: str = ""  # why a fallback worker runs as the grader's uid

    @property
    def protections(self) -> tuple[str, ...]:
        return protections(
            self.policy,
            self.mode,
            note=self.note,
            uid_note=self.uid_note,
            as_root=os.geteuid() == 0,
        )

    def command(self, argv: Sequence[str], scratch: str) -> list[str]:
        if self.mode != "bwrap":
            return list(argv)
        assert self.bwrap is not None
        setpriv = shutil.which("setpriv", path=SAFE_PATH) or "setpriv"
        return [self.bwrap, *bwrap_arguments(self.policy, scratch, setpriv), *argv]

    def environment(self, scratch: str, submission: str, marker: str = "") -> dict[str, str]:
        """The worker's whole environment. ``marker`` (GRADER_WORKER_ID) lets the fallback find
        descendants that left the process tree but kept the environment."""
        return {
            **dict(self.policy.environment),
            "HOME": scratch,
            "TMPDIR": scratch,
            "GRADER_SUBMISSION": submission,
            "GRADER_SCRATCH": scratch,
            "GRADER_HIDDEN": os.pathsep.join(self.policy.hidden),
            "GRADER_SANDBOX": self.mode,
            "GRADER_WORKER_ID": marker,
        }

    def child_setup(self, channel: tuple[int, int] | None) -> Callable[[], None]:
        fallback = self.mode == "none"  # bwrap: setpriv drops the uid, inside the namespaces
        return _make_child_setup(
            self.policy,
            channel=channel,
            drop_to=self.policy.uid if fallback else None,
            subreaper=fallback,
        )

    def make_scratch(
        self, submission: Path, slot: int, within: str | None = None
    ) -> tuple[str, str]:
        """A fresh scratch directory holding a copy of the submission, owned by the worker;
        ``within``: the folder a zygote's sandbox has writable (``grader.sandbox.warm``)."""
        scratch = _real(tempfile.mkdtemp(prefix=f"grader-worker-{slot}-", dir=within))
        try:
            target = os.path.join(scratch, submission.name or "submission")
            if submission.is_dir():
                # symlinks stay symlinks: following them here (as root) could copy hidden files
                shutil.copytree(submission, target, symlinks=True)
            else:
                shutil.copyfile(submission, target)
            if self.policy.uid is not None and os.geteuid() == 0:
                _chown_tree(scratch, self.policy.uid)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        return scratch, target


def _chown_tree(root: str, uid: int) -> None:
    os.chown(root, uid, uid, follow_symlinks=False)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)


# --------------------------------------------------------------------------- probing

_PROBE_CODE = (
    "import importlib.util as u, json, os, sys\n"
    "print(json.dumps({'prefix': sys.prefix, 'base_prefix': sys.base_prefix,"
    " 'version': sys.version, 'numpy': u.find_spec('numpy') is not None,"
    " 'uid': os.getuid(),"
    " 'unreadable': [p for p in sys.argv[1:] if not os.access(p, os.R_OK)]}))\n"
)
_probe_cache: dict[tuple, tuple[bool, str]] = {}
_probe_lock = threading.Lock()


def _run_probe(confinement: Confinement, argv: Sequence[str]) -> tuple[int, str, str]:
    scratch = _real(tempfile.mkdtemp(prefix="grader-probe-"))
    try:
        if confinement.policy.uid is not None and os.geteuid() == 0:
            _chown_tree(scratch, confinement.policy.uid)
        proc = subprocess.run(
            confinement.command(argv, scratch),
            cwd=scratch,
            env=confinement.environment(scratch, scratch),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            close_fds=False,
            start_new_session=True,
            preexec_fn=confinement.child_setup(None),
        )
        return (
            proc.returncode,
            proc.stdout.decode(errors="replace"),
            proc.stderr.decode(errors="replace"),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return -1, "", f"{type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _reference(argv0: str, readable: tuple[str, ...]) -> dict | None:
    """The probe run unconfined: what the interpreter looks like when nothing is in the way."""
    key = ("reference", argv0, readable)
    with _probe_lock:
        if key in _probe_cache:
            ok, text = _probe_cache[key]
            return json.loads(text) if ok else None
    try:
        proc = subprocess.run(
            [argv0, "-I", "-c", _PROBE_CODE, *readable],
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            env={"PATH": SAFE_PATH},
        )
        info = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        info = None
    with _probe_lock:
        _probe_cache[key] = (info is not None, json.dumps(info))
    return info


def _probe(confinement: Confinement, argv0: str) -> tuple[bool, str]:
    """Does ``argv0`` run under ``confinement`` as it does outside (same prefix, numpy)?"""
    policy = confinement.policy
    readable = policy.readable
    # not the limits: probing again for each of them would only cost time
    key = (
        "probe",
        confinement.mode,
        policy.uid,
        policy.interpreter,
        readable,
        policy.hidden,
        argv0,
    )
    with _probe_lock:
        if key in _probe_cache:
            return _probe_cache[key]
    reference = _reference(argv0, readable)
    if reference is None:  # not a Python we can ask: settle for "a trivial command runs"
        rc, _, err = _run_probe(confinement, ["/bin/sh", "-c", "exit 0"])
        result = (rc == 0, "" if rc == 0 else f"a trivial command failed ({last_line(err)})")
    else:
        rc, out, err = _run_probe(confinement, [argv0, "-I", "-c", _PROBE_CODE, *readable])
        result = _compare(reference, rc, out, err, policy.uid)
    with _probe_lock:
        _probe_cache[key] = result
    return result


def _compare(reference: dict, rc: int, out: str, err: str, uid: int | None) -> tuple[bool, str]:
    if rc != 0:
        return False, f"the interpreter failed to start ({last_line(err) or f'status {rc}'})"
    try:
        inside = json.loads(out)
    except ValueError:
        return False, "the interpreter printed something unexpected"
    for name in ("prefix", "base_prefix", "version"):
        if inside.get(name) != reference.get(name):
            return False, (
                f"the interpreter fell back to sys.{name}={inside.get(name)!r} "
                f"(outside: {reference.get(name)!r})"
            )
    if reference.get("numpy") and not inside.get("numpy"):
        return False, "numpy is not importable"
    if inside.get("unreadable"):
        return False, f"cannot read {', '.join(inside['unreadable'])}"
    if uid is not None and inside.get("uid") != uid:
        return False, f"runs as uid {inside.get('uid')}, not {uid}"
    return True, ""


def settled_probes() -> list[list[Any]]:
    """The probes this process found to work, as JSON: a batch lane's grading runs are forks
    that each probe afresh, so each hands back what it found and the lane keeps it for the
    forks after it (``learn_probes``). A probe that failed is not kept: it is asked again."""
    with _probe_lock:
        return [[list(key), list(found)] for key, found in _probe_cache.items() if found[0]]


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def learn_probes(settled: Any) -> None:
    """Keep probes another process settled (``settled_probes``): its JSON, read as sent by a
    trusted grading process; anything malformed is ignored."""
    try:
        found = {_tuples(key): (True, str(text)) for key, (ok, text) in settled if ok is True}
    except (TypeError, ValueError):
        return
    with _probe_lock:
        _probe_cache.update(found)


_bwrap_status: tuple[bool, str] | None = None


def bwrap_status() -> tuple[bool, str]:
    """Whether bubblewrap runs a trivial command under the default policy here: probed once per
    process, then cached."""
    global _bwrap_status
    with _probe_lock:
        if _bwrap_status is not None:
            return _bwrap_status
    exe = shutil.which("bwrap", path=SAFE_PATH)
    if exe is None:
        status = (False, "bwrap is not installed")
    else:
        scratch = _real(tempfile.mkdtemp(prefix="grader-probe-"))
        cmd = [exe, *bwrap_arguments(Policy(), scratch, setpriv=""), "/bin/sh", "-c", "exit 0"]
        try:
            proc = subprocess.run(
                cmd,
                capture_output=True,
                timeout=_PROBE_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
                env={"PATH": SAFE_PATH},
            )
            status = (
                proc.returncode == 0,
                ""
                if proc.returncode == 0
                else f"bwrap failed: {last_line(proc.stderr.decode(errors='replace'))}",
            )
        except (OSError, subprocess.SubprocessError) as exc:
            status = (False, f"bwrap failed: {exc}")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    with _probe_lock:
        _bwrap_status = status
    return status


# --------------------------------------------------------------------------- deciding


def confine(
    argv: Sequence[str],
    *,
    readable: Sequence[str | os.PathLike[str]],
    hidden: Sequence[str | os.PathLike[str]],
    limits: Limits,
    sandbox: str,
    slot: int,
) -> Confinement:
    """Decide how to run ``argv``. Probes (cached) so that the answer is known to work.

    Raises ``SandboxUnavailable`` for ``sandbox="bwrap"`` when bwrap does not work here.
    """
    if sandbox not in MODES:
        raise ValueError(f"sandbox must be one of {MODES}, got {sandbox!r}")
    if not argv:
        raise ValueError("argv is empty")
    uid = uid_for_slot(slot) if os.geteuid() == 0 else None
    argv0 = argv[0]
    policy = Policy(
        interpreter=tuple(interpreter_roots(argv0)),
        readable=tuple(sorted({_real(p) for p in readable})),
        hidden=tuple(sorted({_real(p) for p in hidden})),
        uid=uid,
        limits=limits,
    )
    note = ""
    if sandbox in ("auto", "bwrap"):
        works, why = bwrap_status()
        if works:
            candidate = Confinement(
                mode="bwrap", policy=policy, bwrap=shutil.which("bwrap", path=SAFE_PATH)
            )
            works, why = _probe(candidate, argv0)
            if works:
                return candidate
        if sandbox == "bwrap":
            raise SandboxUnavailable(f"bubblewrap sandbox unavailable: {why}")
        note = why
    if uid is not None:
        dropped = Confinement(mode="none", policy=policy, note=note)
        works, why = _probe(dropped, argv0)
        if works:
            return dropped
        uid_note = f"a worker's own uid cannot run it: {why}"  # not the slot's number
    else:
        uid_note = ""
    return Confinement(
        mode="none", policy=dataclasses.replace(policy, uid=None), note=note, uid_note=uid_note
    )
