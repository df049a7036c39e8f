"""Every shell command the README and the documentation pages (``docs/*.md``) show works as
written, so a documented command that breaks fails ``make test``: ``tests/project/test_readme.py``
runs the README's, ``tests/project/test_docs.py`` those of the pages that the README does not show.

The commands are the lines of a page's ```sh blocks. Each runs exactly as written (by bash,
with the page's comment cut off) from the root of a copy of this working tree, so what the
commands write (``dist/``, ``grades/``, ``site/``) lands in the copy, never in the checkout. Its
``.venv`` imports ``grader`` from the copy and borrows every other package from the project's
venv, as a clone's own venv would (``make`` sees it installed). The copy holds what the
placeholders name: ``path/to/folder`` and ``uploads/`` real submissions, ``path/to/hw1`` a needle
homework (its ``python/needle/``), ``path/to/Module-1`` a MiniTorch one, ``path/to/project`` a
babygrad book reader's, ``path/to/TinyTorch`` a TinyTorch module 05 one, ``my_engine.ipynb`` a
notebook engine; ``$SECRET`` is a seed and ``python`` the venv's, as after
``. .venv/bin/activate``. Commands that would run for long or forever get what make reads from
the environment, or a Ctrl-C: ``make test`` and ``make check`` run one small test file
(``ARGS``; they would otherwise run these tests again), ``make bench`` one grade and a batch of
one at ``-j 2``, ``make audit`` a sample of four mutants, ``make self-audit`` two mutants of
one small module (its whole flow: the module's tests unmutated, each mutant, the table), and
``make watch`` is stopped once it watches. Commands that build on each other (the install's,
the worked example's new course) form a chain, run by one worker in the page's order.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ENGINES
from tests.helpers.grading import REFERENCE, REPO
from tests.helpers.programs import needs_mkdocs
from tests.helpers.venvs import NOT_COPIED, assert_not_unconfined, overlay_venv

README = REPO / "README.md"
PAGES = sorted((REPO / "docs").glob("*.md"))
"""The documentation site's pages (``mkdocs.yml``)."""
SECRET = "20261123"


SELF_AUDITED = "batch/ledger"


def _first_mutants() -> str:
    """``--mutant`` options for the first two mutants of ``SELF_AUDITED`` in the self-audit,
    made when the command runs: importing the self-audit and parsing the module's mutants
    takes about a second, which every process collecting these tests would pay."""
    from tests import self_audit  # here, not at the top: see above

    (target,) = [t for t in self_audit.TARGETS if t.name == SELF_AUDITED]
    return " ".join(f"--mutant {mutant.id}" for mutant in target.mutants()[:2])


ENVIRONMENT: dict[str, dict[str, str | Callable[[], str]]] = {
    # what make reads from the environment, per command (a function: worked out as it runs)
    "make test": {"ARGS": "tests/report/test_formats.py"},
    "make check": {"ARGS": "tests/report/test_formats.py"},
    "make bench": {"ARGS": "--repeats 1 --batch 1 --jobs 2"},
    "make audit": {"ARGS": "--sample 4 --programs 20 -j 2"},
    "make self-audit": {"MODULE": SELF_AUDITED, "ARGS": _first_mutants},
}
PRODUCES = {
    "make release": "dist/student/rubric.yaml",
    "make gradescope SEED=$SECRET": "dist/gradescope/autograder.zip",
    "make audit": "audit/audit.html",
    "make docs": "site/index.html",
    "python -m grader batch uploads/ --out grades/ --seed $SECRET -j 2": "grades/grades.csv",
}
NEEDS = {"make docs": needs_mkdocs}
"""The commands that need an optional dependency: without it they skip, saying so."""
CHAINS = {
    "install": ("python -m build", "../grader-env"),
    "new-course": ("my-course",),
}
"""Commands that build on each other, by what they share: one worker runs each chain, in order."""


def shown_commands(text: str) -> list[str]:
    """The lines of every ```sh block, without their comments, each once, in order."""
    commands: list[str] = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL):
        for line in block.splitlines():
            command = re.sub(r"\s+#.*$", "", line).strip()
            if command and command not in commands:
                commands.append(command)
    return commands


def commands_of(paths: Iterable[Path], shown_elsewhere: Iterable[str] = ()) -> list[str]:
    """The commands ``paths`` show, each once, in order, but those ``shown_elsewhere`` (which
    another test runs)."""
    commands: list[str] = []
    for path in paths:
        for command in shown_commands(path.read_text()):
            if command not in commands and command not in shown_elsewhere:
                commands.append(command)
    return commands


def notebook(source: str) -> str:
    """A notebook as Jupyter saves it, with ``source`` as its one code cell."""
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "id": "engine",
        "metadata": {},
        "outputs": [],
        "source": source.splitlines(keepends=True),
    }
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def placeholders_made_real(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the working tree with its own venv, and the placeholders made real."""
    root = tmp_path_factory.mktemp("shown") / "autograd-grader"
    shutil.copytree(REPO, root, ignore=NOT_COPIED)
    overlay_venv(root / ".venv", root)
    engine = (REFERENCE / "micrograd" / "engine.py").read_text()
    shutil.copytree(REFERENCE, root / "path" / "to" / "folder", ignore=NOT_COPIED)
    for engines, placeholder in [
        (ENGINES / "needle-hw1" / "layout2022", "hw1"),
        (ENGINES / "minitorch-module1" / "other", "Module-1"),
        (ENGINES / "babygrad-book" / "author", "project"),
        (REPO / "courses" / "tinytorch-autograd" / "reference", "TinyTorch"),
    ]:
        shutil.copytree(engines, root / "path" / "to" / placeholder, ignore=NOT_COPIED)
    (root / "my_engine.ipynb").write_text(notebook(engine))
    shutil.copytree(REFERENCE, root / "uploads" / "alice", ignore=NOT_COPIED)
    (root / "uploads" / "bob.py").write_text(engine.replace("1.0 - t * t", "1.0 - t"))
    return root


def _environment(root: Path, command: str) -> dict[str, str]:
    """The caller's environment, less what the outer make (its flags, and the variables of
    its command line, such as ARGS) and pytest-xdist put there."""
    makefile = (root / "Makefile").read_text()
    variables = set(re.findall(r"\$\((\w+)\)", makefile))
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in variables and not key.startswith(("MAKE", "MFLAGS", "PYTEST_"))
    }
    env.update(
        PATH=f"{root / '.venv' / 'bin'}{os.pathsep}{env['PATH']}",
        SECRET=SECRET,
        COLUMNS="200",
        **{
            name: value() if callable(value) else value
            for name, value in ENVIRONMENT.get(command, {}).items()
        },
    )
    return env


def cases(commands: list[str]) -> list[Any]:
    """The commands as test parameters: a chain's on one worker."""
    params = []
    for command in commands:
        chain = [name for name, shared in CHAINS.items() if any(s in command for s in shared)]
        marks = [pytest.mark.xdist_group(f"shown-{chain[0]}")] if chain else []
        marks += [NEEDS[command]] if command in NEEDS else []
        params.append(pytest.param(command, marks=marks))
    return params


def run_as_shown(root: Path, command: str) -> None:
    """Run ``command`` as a reader would, from the copy's root: it must succeed, and write what
    it says it writes; a command that watches is stopped with Ctrl-C."""
    if command.startswith("make watch"):
        _watch_until_ctrl_c(root, command)
        return
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=root,
        env=_environment(root, command),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert_not_unconfined(done.stdout)
    if command in PRODUCES:
        assert (root / PRODUCES[command]).is_file(), done.stdout + done.stderr


def _watch_until_ctrl_c(root: Path, command: str) -> None:
    """Run a command that watches until it says so, then press Ctrl-C: it stops on its own
    terms, not with a traceback."""
    proc = subprocess.Popen(
        ["bash", "-c", command],
        cwd=root,
        env=_environment(root, command),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    output = Output(proc)
    try:
        output.wait_for("(Ctrl-C to stop)", 300)
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C sends: the whole foreground group
        proc.wait(timeout=60)
    output.wait_for("stopped", 60)  # watch's own way out, not a traceback


class Output:
    """A child's stdout read as it comes, to wait for a line without sleeping blindly."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc, self.text = proc, ""
        self.selector = selectors.DefaultSelector()
        self.selector.register(proc.stdout, selectors.EVENT_READ)

    def wait_for(self, expected: str, seconds: float) -> str:
        deadline = time.monotonic() + seconds
        while expected not in self.text:
            left = deadline - time.monotonic()
            assert left > 0, f"no {expected!r} within {seconds} s; output:\n{self.text}"
            if self.selector.select(left):
                chunk = os.read(self.proc.stdout.fileno(), 65536).decode()
                assert chunk, f"watch exited before {expected!r}; output:\n{self.text}"
                self.text += chunk
        return self.text
