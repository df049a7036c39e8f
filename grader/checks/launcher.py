"""The worker a real grade asks: the sandboxed runner, on the first free slot from the
session's, with nothing of the grader's it could copy in sight (``GradingSession.launch``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from grader.layout import SECRET, worker_readable
from grader.oracles import torch_oracle
from grader.sandbox import sharing
from grader.sandbox.launch import Limits, Worker, worker_in_free_slot
from grader.sandbox.sandbox import SandboxUnavailable, SlotBusy


class LaunchSettings(Protocol):
    """What a launch reads of the session it starts a worker for."""

    submission: Path
    reference_dir: Path | None
    slot: int
    limits: Limits
    sandbox: str


def sandboxed_worker(
    session: LaunchSettings,
    module: str = "grader.worker.runner",
    submission: Path | None = None,
    arguments: Sequence[str] = (),
) -> Worker:
    """The worker for ``session``'s submission, sandbox, slot and limits. Hidden from it:
    ``SECRET`` (the grading tests, the oracles, the reference solutions), PyTorch, and the
    reference this grade was given. ``module``: what runs inside (the probes' runner, or
    ``grader.worker.fresh`` for snippets), with ``arguments``; ``submission``: another folder
    to copy in (the reference, whose snippets' output is the expected one)."""
    hidden = list(SECRET)
    torch_dir = torch_oracle.location()
    if torch_dir is not None:
        hidden.append(torch_dir)
    if session.reference_dir is not None:
        hidden.append(session.reference_dir.resolve())
    return worker_in_free_slot(
        [sys.executable, "-I", "-m", module, *arguments],
        first_slot=session.slot,
        submission=submission or session.submission,
        readable=worker_readable(),
        hidden=hidden,
        limits=session.limits,
        sandbox=session.sandbox,
    )


def zygote_ahead(zygotes: sharing.Lane, session: LaunchSettings) -> bool:
    """Have a lane (``zygotes``) start now, without waiting for it, the zygote its runs of
    ``session``'s settings will ask to fork their probes' worker, where one would fork it
    (``Lane.head_start``): whether one starts. The sandbox's probes run first, as a run's
    would: in a ``Worker`` that holds its slot and swept its uid (nothing else runs as it),
    which starts no process; the forks take what they found."""
    try:
        worker = sandboxed_worker(session)
    except (SandboxUnavailable, SlotBusy, OSError):
        return False
    with worker:
        return zygotes.head_start(worker.confinement, worker.argv)
