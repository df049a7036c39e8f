"""Where a grade's time goes: a sampling profile of every process a grade starts, by kind.

``make bench`` prints it so the next person to speed the grader up starts from a measurement,
not a guess. py-spy samples each process of the tree (``--subprocesses``) while its Python
thread holds the GIL (``--gil``): a process blocked on a pipe, as the worker between two
requests and the grading process waiting for an answer are, costs nothing, as it costs no CPU.
A process that holds the GIL but waits for a core on a busy machine still counts: the shares
are to be trusted more than the seconds.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

RATE = 200
"""Samples a second."""
TIMEOUT_S = 600.0
"""How long one profiled command may take (a grade takes seconds) before py-spy is stopped."""
STOP_WAIT_S = 30.0
"""How long py-spy may take to write what it sampled once told to stop."""
KINDS = ("command", "grading", "worker", "other")
PROCESS = re.compile(r'process (\d+):"(.*?)"(?=;|$)', re.S)
COUNT = re.compile(r" (\d+)$")


def kind(command_line: str) -> str:
    """Which part of a grade a process is: the command a user typed, a trusted grading process
    (pytest, or a lane's fork of it), a sandboxed worker, or another helper."""
    if "grader.worker" in command_line:
        return "worker"
    if "pytest" in command_line or "grader.batch.lane" in command_line:
        return "grading"
    if " -m grader " in f"{command_line} ":
        return "command"
    return "other"


@dataclass
class Breakdown:
    """Seconds sampled in each kind of process and, within each, in each function itself."""

    seconds: Counter[str] = field(default_factory=Counter)
    functions: defaultdict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    importing: Counter[str] = field(default_factory=Counter)
    """Of ``seconds``, those spent importing modules."""

    def add(self, stack: str, samples: int) -> None:
        """One line of py-spy's raw output: the processes from the root down, then frames."""
        processes = list(PROCESS.finditer(stack))
        if not processes:
            return
        last = processes[-1]
        frames = [f for f in stack[last.end() :].split(";") if f][1:]  # [0]: the thread
        # the root is the command profiled, whatever py-spy read of its command line (it has
        # been seen to read none)
        which = "command" if len(processes) == 1 else kind(last.group(2))
        self.seconds[which] += samples / RATE
        if any(f.startswith("_find_and_load ") for f in frames):
            self.importing[which] += samples / RATE
        if frames:
            self.functions[which][frames[-1]] += samples / RATE

    def lines(self, top: int = 5) -> list[str]:
        """The summary ``make bench`` prints: CPU per kind of process, its busiest functions."""
        total = sum(self.seconds.values()) or 1.0
        out = [f"  sampled CPU {total:.2f} s (py-spy --gil --subprocesses)"]
        for which in KINDS:
            if not self.seconds[which]:
                continue
            share = self.seconds[which] / total
            out.append(
                f"  {which:<8} {self.seconds[which]:6.2f} s  {share:4.0%}  "
                f"({self.importing[which]:.2f} s importing)"
            )
            for function, seconds in self.functions[which].most_common(top):
                out.append(f"      {seconds:5.2f} s  {function[:100]}")
        return out


def parsed(raw: str) -> Breakdown:
    """py-spy's raw (collapsed) output; a command line may span lines, a record ends with its
    sample count."""
    found, record = Breakdown(), ""
    for line in raw.split("\n"):
        record = f"{record}\n{line}" if record else line
        count = COUNT.search(record)
        if count is not None and record.startswith("process "):
            found.add(record[: count.start()], int(count.group(1)))
            record = ""
    return found


def py_spy() -> str | None:
    """py-spy beside this Python (a venv's), else on the path; None: not installed."""
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.is_file() else shutil.which("py-spy")


def profile(command: list[str]) -> Breakdown | None:
    """Run ``command`` under py-spy: the breakdown, or None without py-spy or when it cannot
    attach (no ptrace). py-spy has been seen to keep sampling long after the command it
    started had exited: past ``TIMEOUT_S`` it is told to stop, as Ctrl-C would (it writes what
    it sampled), then killed."""
    spy = py_spy()
    if spy is None:
        return None
    with tempfile.TemporaryDirectory(prefix="grader-profile-") as tmp:
        raw = Path(tmp) / "profile.txt"
        sampler = [spy, "record", "--gil", "--subprocesses", "-r", str(RATE), "-f", "raw"]
        with subprocess.Popen(
            [*sampler, "-o", str(raw), "--", *command],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ) as sampling:
            try:
                sampling.wait(TIMEOUT_S)
            except subprocess.TimeoutExpired:
                sampling.send_signal(signal.SIGINT)
                try:
                    sampling.wait(STOP_WAIT_S)
                except subprocess.TimeoutExpired:
                    sampling.kill()
        return parsed(raw.read_text()) if raw.is_file() else None
