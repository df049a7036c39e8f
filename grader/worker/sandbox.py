"""How an untrusted worker is confined: its command line, limits, uid and environment.

This module only *decides*; ``launch.py`` runs the worker, talks to it, times it and kills it.

Two modes (``confine(..., sandbox=...)`` picks one, ``"auto"`` probes once and caches):

``bwrap``
    bubblewrap started as root *without* a user namespace (one would map the worker back to
    host uid 0, where ``RLIMIT_NPROC`` does not bite). The sandbox gets a private filesystem
    view (only ``/usr``, ``/etc``, the interpreter's prefix, the ``readable`` paths and a
    read-write scratch directory are mounted; ``hidden`` paths are masked by an empty tmpfs),
    no network, its own pid/ipc/uts namespaces, and the worker drops to a dedicated
    unprivileged uid (``BASE_UID + slot``) through ``setpriv`` with no capabilities and
    ``no_new_privs``. Parent directories of every bind are created 0755: bwrap would make
    them 0700 and the interpreter then silently falls back to the system Python.
    Killing the sandbox's pid-1 kills every process in it, ``setsid()`` daemons included.

``none``
    A plain subprocess in its own session with the same rlimits. Nothing isolates the
    filesystem or the network; ``hidden`` paths are only handed to the runner (which blocks
    imports) in ``GRADER_HIDDEN``. As root, the worker drops to the slot's uid only if the
    interpreter works as that uid (a probe checks; a pyenv under ``/root`` does not), which
    makes ``RLIMIT_NPROC`` bite and lets the parent sweep stray processes with ``kill(-1)``.
    ``protections`` says plainly what is not in force.

Limits are set in the child between ``fork`` and ``exec`` (of bwrap, or of the worker) and are
inherited by everything the worker starts: ``RLIMIT_AS``, ``RLIMIT_FSIZE``, ``RLIMIT_NPROC``
(only where the worker has a uid of its own), ``RLIMIT_CORE`` = 0 and a generous
``RLIMIT_CPU`` cap; ``oom_score_adj`` = 1000 so the kernel's OOM killer picks the worker first.
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
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from grader.worker.framing import MAX_FRAME_BYTES

MODES = ("auto", "bwrap", "none")
BASE_UID = 64000
MAX_SLOTS = 1000
HARD_CPU_LIMIT_S = 600
OOM_SCORE_ADJ = 1000
SHM_BYTES = 16 * 1024 * 1024
REQUEST_FD = 3
REPLY_FD = 4
# Read-only system directories; a symlink (merged /usr) is recreated as the same symlink.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc")
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
_PROBE_TIMEOUT_S = 30.0
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38


class SandboxUnavailable(RuntimeError):
    """``sandbox="bwrap"`` was asked for but does not work here (the message says why)."""


class SlotBusy(RuntimeError):
    """Another live Worker (in this or another process) holds the same slot."""


@dataclasses.dataclass(frozen=True)
class Limits:
    memory_mb: int = 2048  # RLIMIT_AS; numpy/OpenBLAS breaks below 256, use >= 1024
    file_size_mb: int = 64  # RLIMIT_FSIZE
    processes: int = 32  # RLIMIT_NPROC (only effective for a uid of the worker's own)
    output_cap_bytes: int = 64 * 1024  # how much of stdout+stderr the parent keeps
    reply_bytes: int = 4 * 1024 * 1024  # largest reply the trusted parent will parse
    wall_factor: float = 3.0  # wall-clock backstop = cpu_budget * wall_factor + 5 s

    def __post_init__(self) -> None:
        if self.memory_mb < 256:
            raise ValueError("memory_mb below 256 breaks numpy/OpenBLAS; use at least 1024")
        if self.file_size_mb < 1:
            raise ValueError("file_size_mb must be at least 1")
        if self.processes < 4:
            raise ValueError("processes must be at least 4 (bwrap and the worker need some)")
        if self.output_cap_bytes < 1024:
            raise ValueError("output_cap_bytes must be at least 1024")
        if not 1024 <= self.reply_bytes <= MAX_FRAME_BYTES:
            raise ValueError(f"reply_bytes must be between 1024 and {MAX_FRAME_BYTES}")
        if not self.wall_factor >= 1.0:
            raise ValueError("wall_factor must be at least 1.0")


DEFAULT_LIMITS = Limits()


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
        "get killed)")


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
                "parallel Worker its own slot") from None
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
        subprocess.run([kill, "-KILL", "-1"], user=uid, group=uid, extra_groups=[],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, close_fds=True, timeout=10, env={})


# --------------------------------------------------------------------------- the child side


def _libc_prctl() -> Callable[..., int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                      ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


_PRCTL = _libc_prctl()


def _rlimits(limits: Limits, *, count_processes: bool) -> list[tuple[int, tuple[int, int]]]:
    mib = 1024 * 1024
    out = [
        (resource.RLIMIT_AS, (limits.memory_mb * mib,) * 2),
        (resource.RLIMIT_FSIZE, (limits.file_size_mb * mib,) * 2),
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_CPU, (HARD_CPU_LIMIT_S, HARD_CPU_LIMIT_S + 5)),
    ]
    if count_processes:
        out.append((resource.RLIMIT_NPROC, (limits.processes,) * 2))
    return out


def _make_child_setup(*, channel: tuple[int, int] | None,
                      rlimits: list[tuple[int, tuple[int, int]]], drop_to: int | None,
                      subreaper: bool) -> Callable[[], None]:
    """The ``preexec_fn``: runs in the forked child just before ``exec``.

    Kept to plain system calls (no imports, no locks). ``subprocess`` closes inherited fds
    only *after* ``preexec_fn``, so this runs with ``close_fds=False`` and does that job
    itself: the two channel ends go to fds 3 and 4, every other fd above 2 is close-on-exec.
    """
    prctl = _PRCTL
    req, rep = channel if channel is not None else (-1, -1)

    def setup() -> None:
        first_free = 3
        if channel is not None:
            high_req = fcntl.fcntl(req, fcntl.F_DUPFD, 10)
            high_rep = fcntl.fcntl(rep, fcntl.F_DUPFD, 10)
            os.dup2(high_req, REQUEST_FD)
            os.dup2(high_rep, REPLY_FD)
            first_free = REPLY_FD + 1
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            if fd >= first_free:
                with contextlib.suppress(OSError):
                    os.set_inheritable(fd, False)
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
        try:
            os.write(fd, str(OOM_SCORE_ADJ).encode())
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


# --------------------------------------------------------------------------- paths and mounts


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(path))


def _is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _ancestors(path: str) -> list[str]:
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def interpreter_roots(argv0: str) -> list[str]:
    """Directories the interpreter needs, besides /usr: its installation prefix."""
    exe = _real(shutil.which(argv0) or argv0)
    roots = []
    for prefix in {_real(sys.base_prefix), _real(sys.base_exec_prefix)}:
        if _is_under(exe, prefix):
            roots.append(prefix)
    if not roots:
        prefix = os.path.dirname(os.path.dirname(exe))
        if prefix not in ("", "/") and not _is_under(prefix, "/usr"):
            roots.append(prefix)
    return sorted(set(roots))


def _mount_plan(binds: Iterable[str], hidden: Iterable[str]) -> tuple[list[str], list[str]]:
    """bwrap arguments for read-only ``binds`` and ``hidden`` masks, and the bound roots."""
    args: list[str] = []
    bound: list[str] = []
    made = {"/"}
    for system in SYSTEM_PATHS:
        if os.path.islink(system):
            args += ["--symlink", os.readlink(system), system]
            made.add(system)
        elif os.path.isdir(system):
            args += ["--ro-bind", system, system]
            bound.append(system)
    for path in sorted({p for p in binds if os.path.exists(p)}, key=lambda p: (p.count("/"), p)):
        if any(_is_under(path, b) for b in bound):
            continue  # already visible, with the same content
        args += _make_parents(path, made, bound)
        args += ["--ro-bind", path, path]
        bound.append(path)
    for path in sorted(set(hidden)):
        if not os.path.lexists(path) or not any(_is_under(path, b) for b in bound):
            continue  # not visible inside anyway
        if os.path.isdir(path) and not os.path.islink(path):
            args += ["--perms", "0555", "--tmpfs", path]
        else:
            args += ["--ro-bind", "/dev/null", path]
    return args, bound


def _make_parents(path: str, made: set[str], bound: Sequence[str]) -> list[str]:
    args: list[str] = []
    for parent in _ancestors(path):
        if parent in made or any(_is_under(parent, b) for b in bound):
            continue
        args += ["--perms", "0755", "--dir", parent]
        made.add(parent)
    return args


# --------------------------------------------------------------------------- the confinement


@dataclasses.dataclass(frozen=True)
class Confinement:
    """Everything needed to start one worker generation, and what it protects against."""

    mode: str  # "bwrap" or "none"
    limits: Limits
    uid: int | None  # the worker's own unprivileged uid, or None (same uid as the parent)
    protections: tuple[str, ...]
    hidden: tuple[str, ...]
    bwrap: str | None = None
    mounts: tuple[str, ...] = ()
    bound: tuple[str, ...] = ()
    note: str = ""  # why bwrap is not used (mode "none" under "auto")
    uid_note: str = ""  # why a fallback worker runs as the grader's uid
    _privileged: bool = dataclasses.field(default=False, repr=False)

    def command(self, argv: Sequence[str], scratch: str) -> list[str]:
        if self.mode != "bwrap":
            return list(argv)
        assert self.bwrap is not None
        cmd = [self.bwrap, *self.mounts]
        cmd += _make_parents(scratch, {"/"}, self.bound)
        cmd += ["--bind", scratch, scratch, "--chdir", scratch,
                "--dev", "/dev", "--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs",
                "/dev/shm", "--proc", "/proc",
                "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                "--hostname", "sandbox", "--die-with-parent", "--new-session"]
        if self._privileged and self.uid is not None:
            setpriv = shutil.which("setpriv", path=SAFE_PATH) or "setpriv"
            cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                    "--cap-add", "CAP_SETPCAP", "--",
                    setpriv, f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
                    "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]
        else:
            cmd += ["--"]
        return cmd + list(argv)

    def environment(self, scratch: str, submission: str, marker: str = "") -> dict[str, str]:
        """The worker's whole environment. ``marker`` (GRADER_WORKER_ID) lets the fallback find
        descendants that left the process tree but kept the environment."""
        return {
            "PATH": SAFE_PATH,
            "HOME": scratch,
            "TMPDIR": scratch,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "GRADER_SUBMISSION": submission,
            "GRADER_SCRATCH": scratch,
            "GRADER_HIDDEN": os.pathsep.join(self.hidden),
            "GRADER_SANDBOX": self.mode,
            "GRADER_WORKER_ID": marker,
        }

    def child_setup(self, channel: tuple[int, int] | None) -> Callable[[], None]:
        drops_itself = self.mode == "none" and self.uid is not None
        return _make_child_setup(
            channel=channel,
            rlimits=_rlimits(self.limits, count_processes=self.uid is not None),
            drop_to=self.uid if drops_itself else None,
            subreaper=self.mode == "none")

    def make_scratch(self, submission: Path, slot: int) -> tuple[str, str]:
        """A fresh scratch directory holding a copy of the submission, owned by the worker."""
        scratch = _real(tempfile.mkdtemp(prefix=f"grader-worker-{slot}-"))
        try:
            target = os.path.join(scratch, submission.name or "submission")
            if submission.is_dir():
                # symlinks stay symlinks: following them here (as root) could copy hidden files
                shutil.copytree(submission, target, symlinks=True)
            else:
                shutil.copyfile(submission, target)
            if self.uid is not None and os.geteuid() == 0:
                _chown_tree(scratch, self.uid)
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
        if confinement.uid is not None and os.geteuid() == 0:
            _chown_tree(scratch, confinement.uid)
        proc = subprocess.run(
            confinement.command(argv, scratch), cwd=scratch,
            env=confinement.environment(scratch, scratch), stdin=subprocess.DEVNULL,
            capture_output=True, timeout=_PROBE_TIMEOUT_S, close_fds=False,
            start_new_session=True, preexec_fn=confinement.child_setup(None))
        return proc.returncode, proc.stdout.decode(errors="replace"), \
            proc.stderr.decode(errors="replace")
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
        proc = subprocess.run([argv0, "-I", "-c", _PROBE_CODE, *readable],
                              capture_output=True, timeout=_PROBE_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, env={"PATH": SAFE_PATH})
        info = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        info = None
    with _probe_lock:
        _probe_cache[key] = (info is not None, json.dumps(info))
    return info


def _probe(confinement: Confinement, argv0: str, readable: tuple[str, ...]) -> tuple[bool, str]:
    """Does ``argv0`` run under ``confinement`` as it does outside (same prefix, numpy)?"""
    key = ("probe", confinement.mode, confinement.uid, confinement.mounts, argv0, readable)
    with _probe_lock:
        if key in _probe_cache:
            return _probe_cache[key]
    reference = _reference(argv0, readable)
    if reference is None:  # not a Python we can ask: settle for "a trivial command runs"
        rc, _, err = _run_probe(confinement, ["/bin/sh", "-c", "exit 0"])
        result = (rc == 0, "" if rc == 0 else f"a trivial command failed ({_last_line(err)})")
    else:
        rc, out, err = _run_probe(confinement, [argv0, "-I", "-c", _PROBE_CODE, *readable])
        result = _compare(reference, rc, out, err, confinement.uid)
    with _probe_lock:
        _probe_cache[key] = result
    return result


def _compare(reference: dict, rc: int, out: str, err: str,
             uid: int | None) -> tuple[bool, str]:
    if rc != 0:
        return False, f"the interpreter failed to start ({_last_line(err) or f'status {rc}'})"
    try:
        inside = json.loads(out)
    except ValueError:
        return False, "the interpreter printed something unexpected"
    for name in ("prefix", "base_prefix", "version"):
        if inside.get(name) != reference.get(name):
            return False, (f"the interpreter fell back to sys.{name}={inside.get(name)!r} "
                           f"(outside: {reference.get(name)!r})")
    if reference.get("numpy") and not inside.get("numpy"):
        return False, "numpy is not importable"
    if inside.get("unreadable"):
        return False, f"cannot read {', '.join(inside['unreadable'])}"
    if uid is not None and inside.get("uid") != uid:
        return False, f"runs as uid {inside.get('uid')}, not {uid}"
    return True, ""


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


_bwrap_status: tuple[bool, str] | None = None


def bwrap_status() -> tuple[bool, str]:
    """Whether bubblewrap runs a trivial sandbox here: probed once per process, then cached."""
    global _bwrap_status
    with _probe_lock:
        if _bwrap_status is not None:
            return _bwrap_status
    exe = shutil.which("bwrap", path=SAFE_PATH)
    if exe is None:
        status = (False, "bwrap is not installed")
    else:
        args, _ = _mount_plan([], [])
        cmd = [exe, *args, "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-net",
               "--unshare-ipc", "--die-with-parent", "--new-session", "--", "/bin/sh", "-c",
               "exit 0"]
        try:
            proc = subprocess.run(cmd, capture_output=True, timeout=_PROBE_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL, env={"PATH": SAFE_PATH})
            status = (proc.returncode == 0,
                      "" if proc.returncode == 0 else
                      f"bwrap failed: {_last_line(proc.stderr.decode(errors='replace'))}")
        except (OSError, subprocess.SubprocessError) as exc:
            status = (False, f"bwrap failed: {exc}")
    with _probe_lock:
        _bwrap_status = status
    return status


# --------------------------------------------------------------------------- deciding


def confine(argv: Sequence[str], *, readable: Sequence[str | os.PathLike[str]],
            hidden: Sequence[str | os.PathLike[str]], limits: Limits, sandbox: str,
            slot: int) -> Confinement:
    """Decide how to run ``argv``. Probes (cached) so that the answer is known to work.

    Raises ``SandboxUnavailable`` for ``sandbox="bwrap"`` when bwrap does not work here.
    """
    if sandbox not in MODES:
        raise ValueError(f"sandbox must be one of {MODES}, got {sandbox!r}")
    if not argv:
        raise ValueError("argv is empty")
    root = os.geteuid() == 0
    uid = uid_for_slot(slot) if root else None
    readable_real = tuple(sorted({_real(p) for p in readable}))
    hidden_real = tuple(sorted({_real(p) for p in hidden}))
    argv0 = argv[0]
    note = ""
    if sandbox in ("auto", "bwrap"):
        works, why = bwrap_status()
        if works:
            binds = [*interpreter_roots(argv0), *readable_real]
            mounts, bound = _mount_plan(binds, hidden_real)
            candidate = Confinement(
                mode="bwrap", limits=limits, uid=uid, protections=(), hidden=hidden_real,
                bwrap=shutil.which("bwrap", path=SAFE_PATH), mounts=tuple(mounts),
                bound=tuple(bound), _privileged=root)
            works, why = _probe(candidate, argv0, readable_real)
            if works:
                return _with_protections(candidate, readable_real)
        if sandbox == "bwrap":
            raise SandboxUnavailable(f"bubblewrap sandbox unavailable: {why}")
        note = why
    if uid is not None:
        dropped = Confinement(mode="none", limits=limits, uid=uid, protections=(),
                              hidden=hidden_real, note=note)
        works, why = _probe(dropped, argv0, readable_real)
        if works:
            return _with_protections(dropped, readable_real)
        uid_note = f"uid {uid} cannot run it: {why}"
    else:
        uid_note = ""
    plain = Confinement(mode="none", limits=limits, uid=None, protections=(),
                        hidden=hidden_real, note=note, uid_note=uid_note)
    return _with_protections(plain, readable_real)


def _with_protections(c: Confinement, readable: tuple[str, ...]) -> Confinement:
    lim = c.limits
    common = [
        f"memory limit {lim.memory_mb} MB (address space)",
        f"file size limit {lim.file_size_mb} MB",
        "no core dumps",
        "CPU-time deadline per request (whole process tree), wall-clock backstop "
        f"(budget x {lim.wall_factor:g} + 5 s), hard CPU cap {HARD_CPU_LIMIT_S} s per process",
        "own session and process group; stdin closed",
        f"output capped at {lim.output_cap_bytes} bytes",
        "minimal environment",
        f"oom_score_adj {OOM_SCORE_ADJ}",
        "fresh scratch directory per worker start",
    ]
    if c.mode == "bwrap":
        out = [
            "bubblewrap: private filesystem view (system dirs, the interpreter and "
            f"{len(readable)} readable path(s), read-only)",
            "writable: the scratch directory only (and a 16 MB /dev/shm)",
            f"{sum(1 for h in c.hidden if any(_is_under(h, b) for b in c.bound))} hidden "
            "path(s) masked",
            "no network (network namespace)",
            "pid namespace: killing the sandbox kills every process in it",
            "ipc and uts namespaces",
        ]
        if c.uid is not None:
            out += [f"uid {c.uid} (unprivileged, no capabilities, no_new_privs)",
                    f"process limit {lim.processes}"]
        else:
            out += ["same uid as the grader (not root: cannot switch to a worker uid)",
                    "process limit NOT enforced (no uid of its own)"]
    else:
        out = [
            "NO sandbox" + (f" (bubblewrap unavailable: {c.note})" if c.note else ""),
            "NO filesystem isolation: hidden paths are only blocked from import by the runner "
            "(GRADER_HIDDEN)",
            "NO network isolation",
            "NO pid namespace: a process that detaches from the worker's tree may escape",
        ]
        if c.uid is not None:
            out += [f"uid {c.uid} (unprivileged, no_new_privs); stray processes of that uid are "
                    "killed",
                    f"process limit {lim.processes}"]
        elif os.geteuid() == 0:
            out += ["runs as root" + (f" ({c.uid_note})" if c.uid_note else "")
                    + ": process limit NOT enforced, can read and write everything"]
        else:
            out += ["same uid as the grader: process limit NOT enforced"]
    return dataclasses.replace(c, protections=tuple(out + common))
