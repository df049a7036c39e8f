"""The sandbox policy as data: one record, one commented field per rule a worker runs under.

In the spirit of nsjail's config: ``Policy`` says what confines a worker, and everything else
is derived from it, so what is enforced and what a report says about it cannot drift apart:
``bwrap_arguments`` (bubblewrap's command line), ``Policy.rlimits`` (set before ``exec`` in
every mode) and ``protections`` (each report's lines). Without bubblewrap (mode "none") only
the uid, the limits and the environment hold, and ``protections`` says so for every field
that needs bubblewrap.
"""

from __future__ import annotations

import dataclasses
import os
import resource
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from grader import ONE_THREAD
from grader.sandbox.framing import MAX_FRAME_BYTES, REPLY_FD, REQUEST_FD

MIB = 1024 * 1024
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
WALL_GRACE_S = 5.0  # the wall-clock backstop is cpu_budget * wall_factor + this


@dataclasses.dataclass(frozen=True)
class Limits:
    """How much one worker may use, and how much of what it sends the parent keeps."""

    memory_mb: int = 2048  # RLIMIT_AS; numpy/OpenBLAS breaks below 256, use >= 1024
    file_size_mb: int = 64  # RLIMIT_FSIZE
    processes: int = 32  # RLIMIT_NPROC (only effective for a uid of the worker's own)
    output_cap_bytes: int = 64 * 1024  # how much of stdout+stderr the parent keeps
    reply_bytes: int = 4 * 1024 * 1024  # largest reply the trusted parent will parse
    wall_factor: float = 3.0  # wall-clock backstop = cpu_budget * wall_factor + WALL_GRACE_S

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


@dataclasses.dataclass(frozen=True)
class Policy:
    """What confines one worker; the defaults are the grader's. Paths are real paths."""

    # What is mounted read-only (bwrap): a symlink (merged /usr) is recreated as that symlink.
    system: tuple[str, ...] = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc")
    # Also mounted read-only (bwrap): the interpreter's installation prefix.
    interpreter: tuple[str, ...] = ()
    # Also mounted read-only (bwrap): what the caller lets the worker read.
    readable: tuple[str, ...] = ()
    # Masked where visible (bwrap: empty tmpfs or /dev/null); in GRADER_HIDDEN in every mode.
    hidden: tuple[str, ...] = ()
    # Writable besides a fresh scratch directory (bwrap): a /dev/shm tmpfs of this size.
    shm_bytes: int = 16 * MIB
    # Namespaces of its own (bwrap): net leaves no network, pid ties every process to pid 1.
    namespaces: tuple[str, ...] = ("net", "pid", "ipc", "uts")
    # Its own unprivileged uid (only as root): no groups, no capabilities, no_new_privs.
    uid: int | None = None
    # Address space, file size, processes (with a uid of its own), output and reply caps.
    limits: Limits = DEFAULT_LIMITS
    # RLIMIT_CORE 0 unless True: a crash leaves no core file behind.
    core_dumps: bool = False
    # RLIMIT_CPU of every process (hard limit 5 s more), behind the per-request CPU deadline.
    cpu_cap_s: int = 600
    # Written to /proc/self/oom_score_adj: the kernel's OOM killer picks the worker first.
    oom_score_adj: int = 1000
    # The fixed part of the environment; the rest says where the scratch and submission are.
    environment: tuple[tuple[str, str], ...] = (
        ("PATH", SAFE_PATH),
        ("LANG", "C.UTF-8"),
        ("LC_ALL", "C.UTF-8"),
        *ONE_THREAD.items(),
        ("PYTHONDONTWRITEBYTECODE", "1"),
        ("PYTHONHASHSEED", "0"),
    )
    # Where the worker finds its request and reply pipes: framing's, which the runner reads.
    channel: tuple[int, int] = (REQUEST_FD, REPLY_FD)

    def rlimits(self) -> list[tuple[int, tuple[int, int]]]:
        """Set in the child before ``exec`` (of bwrap or the worker); everything inherits them."""
        out = [
            (resource.RLIMIT_AS, (self.limits.memory_mb * MIB,) * 2),
            (resource.RLIMIT_FSIZE, (self.limits.file_size_mb * MIB,) * 2),
        ]
        if not self.core_dumps:
            out.append((resource.RLIMIT_CORE, (0, 0)))
        out.append((resource.RLIMIT_CPU, (self.cpu_cap_s, self.cpu_cap_s + 5)))
        if self.uid is not None:  # RLIMIT_NPROC counts per uid: the grader's would not do
            out.append((resource.RLIMIT_NPROC, (self.limits.processes,) * 2))
        return out


# --------------------------------------------------------------------------- mounts


def is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def ancestors(path: str) -> list[str]:
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


class Mounts(NamedTuple):
    arguments: tuple[str, ...]  # bubblewrap's: read-only binds, then masks
    bound: tuple[str, ...]  # the roots visible inside
    masked: tuple[str, ...]  # the hidden paths that are masked


def mount_plan(policy: Policy) -> Mounts:
    """The read-only binds and masks of ``policy``; what does not exist here is skipped."""
    args: list[str] = []
    bound: list[str] = []
    made = {"/"}
    for system in policy.system:
        if os.path.islink(system):
            args += ["--symlink", os.readlink(system), system]
            made.add(system)
        elif os.path.isdir(system):
            args += ["--ro-bind", system, system]
            bound.append(system)
    binds = {p for p in (*policy.interpreter, *policy.readable) if os.path.exists(p)}
    for path in sorted(binds, key=lambda p: (p.count("/"), p)):
        if any(is_under(path, b) for b in bound):
            continue  # already visible, with the same content
        args += _make_parents(path, made, bound)
        args += ["--ro-bind", path, path]
        bound.append(path)
    masked: list[str] = []
    for path in sorted(set(policy.hidden)):
        if not os.path.lexists(path) or not any(is_under(path, b) for b in bound):
            continue  # not visible inside anyway
        if os.path.isdir(path) and not os.path.islink(path):
            args += ["--perms", "0555", "--tmpfs", path]
        else:
            args += ["--ro-bind", "/dev/null", path]
        masked.append(path)
    return Mounts(tuple(args), tuple(bound), tuple(masked))


def _make_parents(path: str, made: set[str], bound: Sequence[str]) -> list[str]:
    """bwrap would create missing parents 0700, and the interpreter would then silently fall
    back to the system Python: create them 0755."""
    args: list[str] = []
    for parent in ancestors(path):
        if parent in made or any(is_under(parent, b) for b in bound):
            continue
        args += ["--perms", "0755", "--dir", parent]
        made.add(parent)
    return args


# --------------------------------------------------------------------------- the derivations


_UID_CAPABILITIES = (
    *("--cap-add", "CAP_SETUID"),
    *("--cap-add", "CAP_SETGID"),
    *("--cap-add", "CAP_SETPCAP"),
)
"""What root inside the sandbox keeps to hand a worker its own uid and drop every capability."""


def bwrap_arguments(policy: Policy, scratch: str, setpriv: str) -> list[str]:
    """bubblewrap's arguments, between its path and the worker's argv, enforcing ``policy``.

    Started as root without a user namespace (one would map the worker back to host uid 0,
    where RLIMIT_NPROC does not bite), so the uid is dropped by ``setpriv`` inside."""
    args = _sandbox_arguments(policy, scratch)
    if policy.uid is None:
        return [*args, "--"]
    return [
        *args,
        *_UID_CAPABILITIES,
        "--",
        setpriv,
        f"--reuid={policy.uid}",
        f"--regid={policy.uid}",
        "--clear-groups",
        "--no-new-privs",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
    ]


def zygote_arguments(policy: Policy, scratch: str) -> list[str]:
    """bubblewrap's arguments for a zygote (``grader.sandbox.zygote``): the sandbox a worker
    under ``policy`` has, ``scratch`` holding the workers' scratch directories, and root
    inside with no capability but those it needs to give each forked worker the uid of its
    own (``policy.uid`` says only that there is one)."""
    return [*_sandbox_arguments(policy, scratch), "--cap-drop", "ALL", *_UID_CAPABILITIES, "--"]


def _sandbox_arguments(policy: Policy, scratch: str) -> list[str]:
    """The mounts, namespaces and session of ``policy``'s sandbox, ``scratch`` writable."""
    mounts = mount_plan(policy)
    args = [
        *mounts.arguments,
        *_make_parents(scratch, {"/"}, mounts.bound),
        "--bind",
        scratch,
        scratch,
        "--chdir",
        scratch,
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(policy.shm_bytes),
        "--tmpfs",
        "/dev/shm",
        "--proc",
        "/proc",
    ]
    args += [f"--unshare-{namespace}" for namespace in policy.namespaces]
    if "uts" in policy.namespaces:
        args += ["--hostname", "sandbox"]
    args += ["--die-with-parent", "--new-session"]
    return args


# What a namespace of its own gives the worker, and what its absence means; the namespaces not
# listed here are named together ("ipc and uts namespaces").
_NAMESPACE_LINES = {
    "net": ("no network (network namespace)", "NO network isolation"),
    "pid": (
        "pid namespace: killing the sandbox kills every process in it",
        "NO pid namespace: a process that detaches from the worker's tree may escape",
    ),
}


def protections(
    policy: Policy, mode: str, *, note: str = "", uid_note: str = "", as_root: bool = False
) -> tuple[str, ...]:
    """A report's ``protections``: what ``policy`` enforces in ``mode``, and plainly what not.

    ``note``: why bubblewrap is not used; ``uid_note``: why a fallback worker keeps the
    grader's uid."""
    sandboxed = mode == "bwrap"
    if sandboxed:
        out = [
            "bubblewrap: private filesystem view (system dirs, the interpreter and "
            f"{len(policy.readable)} readable path(s), read-only)",
            f"writable: the scratch directory only (and a {policy.shm_bytes // MIB} MB /dev/shm)",
            f"{len(mount_plan(policy).masked)} hidden path(s) masked",
        ]
    else:
        out = [
            "NO sandbox" + (f" (bubblewrap unavailable: {note})" if note else ""),
            "NO filesystem isolation: hidden paths are only blocked from import by the "
            "runner (GRADER_HIDDEN)",
        ]
    out += _namespace_lines(policy.namespaces, sandboxed)
    out += _identity_lines(policy, sandboxed, uid_note, as_root)
    lim = policy.limits
    out += [
        f"memory limit {lim.memory_mb} MB (address space)",
        f"file size limit {lim.file_size_mb} MB",
    ]
    if not policy.core_dumps:
        out.append("no core dumps")
    out += [
        "CPU-time deadline per request (whole process tree), wall-clock backstop "
        f"(budget x {lim.wall_factor:g} + {WALL_GRACE_S:g} s), hard CPU cap "
        f"{policy.cpu_cap_s} s per process",
        "own session and process group; stdin closed",
        f"output capped at {lim.output_cap_bytes} bytes",
        "minimal environment",
        f"oom_score_adj {policy.oom_score_adj}",
        "fresh scratch directory per worker start",
    ]
    return tuple(out)


def _namespace_lines(namespaces: Iterable[str], sandboxed: bool) -> list[str]:
    lines, others = [], []
    for namespace in namespaces:
        if namespace in _NAMESPACE_LINES:
            lines.append(_NAMESPACE_LINES[namespace][0 if sandboxed else 1])
        else:
            others.append(namespace)
    if others:
        lines.append(("" if sandboxed else "NO ") + " and ".join(others) + " namespaces")
    return lines


WORKER_UID = "a worker uid of its own"
"""Not the number: which of the pooled slots' uids was free differs from one grade of an upload
to the next, and the report must not."""


def _identity_lines(policy: Policy, sandboxed: bool, uid_note: str, as_root: bool) -> list[str]:
    uid, limit = policy.uid, f"process limit {policy.limits.processes}"
    if uid is not None and sandboxed:
        return [f"{WORKER_UID} (unprivileged, no capabilities, no_new_privs)", limit]
    if uid is not None:
        return [
            f"{WORKER_UID} (unprivileged, no_new_privs); stray processes of that uid are killed",
            limit,
        ]
    if sandboxed:
        return [
            "same uid as the grader (not root: cannot switch to a worker uid)",
            "process limit NOT enforced (no uid of its own)",
        ]
    if as_root:
        return [
            "runs as root"
            + (f" ({uid_note})" if uid_note else "")
            + ": process limit NOT enforced, can read and write everything"
        ]
    return ["same uid as the grader: process limit NOT enforced"]
