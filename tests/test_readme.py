"""Every shell command in README.md works as written, so a documented command that breaks
fails ``make test``.

The commands are the lines of the README's ```sh blocks. Each runs exactly as written (by bash,
with the README's comment cut off) from the root of a copy of this working tree, so what the
commands write (``dist/``, ``grades/``) lands in the copy, never in the checkout. Its ``.venv``
imports ``grader`` from the copy and borrows every other package from the project's venv, as
a clone's own venv would (``make`` sees it installed). The copy holds what the placeholders
name: ``path/to/folder`` and ``uploads/`` real submissions, ``path/to/hw1`` a needle homework
(its ``python/needle/``), ``path/to/Module-1`` a MiniTorch one, ``path/to/project`` a
babygrad book reader's, ``path/to/TinyTorch`` a TinyTorch module 05 one,
``my_engine.ipynb`` a notebook engine; ``$SECRET`` is a seed and
``python`` the venv's, as after ``. .venv/bin/activate``.
Commands that would run for long or forever get what make reads from the environment, or a
Ctrl-C: ``make test`` and ``make check`` run one small test file (``ARGS``; they would
otherwise run this test again), ``make bench`` one grade and a batch of one at ``-j 2``,
``make audit`` a sample of four mutants, ``make self-audit`` the four of one module, and
``make watch`` is stopped once it watches.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.grading import REFERENCE, REPO
from tests.test_watch import Output
from tests.venvs import NOT_COPIED, assert_not_unconfined, overlay_venv

pytestmark = pytest.mark.slow

SECRET = "20261123"
ENVIRONMENT = {  # what make reads from the environment, per command
    "make test": {"ARGS": "tests/test_formats.py"},
    "make check": {"ARGS": "tests/test_formats.py"},
    "make bench": {"ARGS": "--repeats 1 --batch 1 --jobs 2"},
    "make audit": {"ARGS": "--sample 4 --programs 20 -j 2"},
    "make self-audit": {"MODULE": "checks/answers"},
}
PRODUCES = {
    "make release": "dist/student/rubric.yaml",
    "make gradescope SEED=$SECRET": "dist/gradescope/autograder.zip",
    "make audit": "audit/audit.html",
    "python -m grader batch uploads/ --out grades/ --seed $SECRET -j 2": "grades/grades.csv",
}


def readme_commands(text: str) -> list[str]:
    """The lines of every ```sh block, without their comments, each once, in order."""
    commands: list[str] = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL):
        for line in block.splitlines():
            command = re.sub(r"\s+#.*$", "", line).strip()
            if command and command not in commands:
                commands.append(command)
    return commands


COMMANDS = readme_commands((REPO / "README.md").read_text())


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


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """A copy of the working tree with its own venv, and the placeholders made real."""
    root = tmp_path_factory.mktemp("readme") / "autograd-grader"
    shutil.copytree(REPO, root, ignore=NOT_COPIED)
    overlay_venv(root / ".venv", root)
    engine = (REFERENCE / "micrograd" / "engine.py").read_text()
    shutil.copytree(REFERENCE, root / "path" / "to" / "folder", ignore=NOT_COPIED)
    shutil.copytree(
        REPO / "tests" / "engines" / "needle-hw1" / "layout2022",
        root / "path" / "to" / "hw1",
        ignore=NOT_COPIED,
    )
    shutil.copytree(
        REPO / "tests" / "engines" / "minitorch-module1" / "other",
        root / "path" / "to" / "Module-1",
        ignore=NOT_COPIED,
    )
    shutil.copytree(
        REPO / "tests" / "engines" / "babygrad-book" / "author",
        root / "path" / "to" / "project",
        ignore=NOT_COPIED,
    )
    shutil.copytree(
        REPO / "courses" / "tinytorch-autograd" / "reference",
        root / "path" / "to" / "TinyTorch",
        ignore=NOT_COPIED,
    )
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
        **ENVIRONMENT.get(command, {}),
    )
    return env


def test_the_readme_documents_the_commands_this_test_fills_in():
    for command in COMMANDS:  # with ARGS of its own, make would run this test again
        assert not re.match(r"make (test|check) .*ARGS", command), command
    assert set(ENVIRONMENT) | set(PRODUCES) <= set(COMMANDS)


INSTALL_CHAIN = ("python -m build", "python -m venv ../grader-env", "../grader-env/")
"""The install's commands build on each other: one worker runs them, in the README's order."""


def _case(command: str) -> Any:
    chained = command.startswith(INSTALL_CHAIN)
    return pytest.param(
        command, marks=[pytest.mark.xdist_group("readme-install")] if chained else []
    )


@pytest.mark.parametrize("command", [_case(c) for c in COMMANDS if not c.startswith("make watch")])
def test_command(root, command):
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


@pytest.mark.parametrize("command", [c for c in COMMANDS if c.startswith("make watch")])
def test_watch_command_until_ctrl_c(root, command):
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
