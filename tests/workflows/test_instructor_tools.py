"""The instructor's tools as they meet their users: ``make release`` and ``make gradescope``
where PyTorch cannot be installed, the help text, the Classroom workflow's steps on a runner
that is not ubuntu-24.04, the Classroom reporter without a grade, and reports other people can
read."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from grader.atomic import write_atomically
from grader.layout import REPO, TEMPLATES
from grader.workflows.cli import parser
from tests.helpers.venvs import BASE_PYTHON, environment

SANDBOX_STEP = "Let bubblewrap sandbox the grading"


def test_help_reads_whole():
    """``--help`` opens with a whole sentence, not a docstring's first line cut mid-way."""
    description = parser().description
    assert description.endswith(".") and "``" not in description
    shown = " ".join(parser().format_help().split())
    assert " ".join(description.split()) in shown


def _fake(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/usr/bin/env bash\n{textwrap.dedent(body)}")
    path.chmod(0o755)


def test_the_sandbox_step_runs_on_a_runner_without_apparmors_userns_setting(tmp_path):
    """The workflow's step, run as GitHub runs it (``bash -e``), on a runner whose kernel has
    no ``kernel.apparmor_restrict_unprivileged_userns`` (every runner but ubuntu-24.04, and
    this machine): ``sudo`` and ``apt-get`` are stand-ins, ``sysctl`` fails on a setting the
    kernel lacks as the real one does."""
    setting = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
    workflow = yaml.safe_load((TEMPLATES / "classroom.yml").read_text())
    (script,) = (
        s["run"] for s in workflow["jobs"]["grade"]["steps"] if s.get("name") == SANDBOX_STEP
    )
    assert "apparmor_restrict_unprivileged_userns=0" in script
    fakes = tmp_path / "bin"
    fakes.mkdir()
    _fake(fakes, "sudo", 'exec "$@"\n')
    _fake(fakes, "apt-get", "exit 0\n")
    _fake(
        fakes,
        "sysctl",
        f"""\
        if [ ! -e {setting} ]; then
            echo "sysctl: cannot stat {setting}: No such file or directory" >&2
            exit 255
        fi
        echo "$@" >> {tmp_path / "written"}
        """,
    )
    run = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        env={**os.environ, "PATH": f"{fakes}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "written").exists() == setting.exists()


def test_the_classroom_reporter_says_in_one_line_that_the_grade_is_missing(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "grader.report.formats.classroom", "grade.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert run.stderr.startswith("grade.json is missing")


def test_reports_are_world_readable(tmp_path):
    """A report is read by a web server or a colleague: 0644, as ``open`` makes files, not
    mkstemp's 0600."""
    report = tmp_path / "grades" / "summary.html"
    write_atomically(report, "<p>ok</p>")
    assert stat.S_IMODE(report.stat().st_mode) == 0o644
    write_atomically(report, "<p>again</p>")
    assert stat.S_IMODE(report.stat().st_mode) == 0o644 and report.read_text() == "<p>again</p>"


@pytest.mark.slow
def test_make_release_and_gradescope_work_where_pytorch_cannot_be_installed(tmp_path):
    """A checkout without the development venv, on a machine whose pip refuses torch (a
    constraint no release satisfies): ``make release gradescope`` installs the grader alone
    into a venv of its own and builds both."""
    checkout = tmp_path / "autograd-grader"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():  # not one deleted in the working tree
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, checkout / name)
    no_torch = tmp_path / "no-torch.txt"
    no_torch.write_text("torch==0+forbidden\n")
    env = {**environment(), "PIP_CONSTRAINT": str(no_torch)}
    planned = subprocess.run(
        ["make", "-n", "release", "gradescope"],
        cwd=checkout,
        env=env,
        text=True,
        capture_output=True,
        check=True,
    ).stdout
    assert "torch" not in planned and "[dev" not in planned, planned
    built = subprocess.run(
        ["make", "-s", "release", "gradescope", f"PYTHON={BASE_PYTHON}", "SEED=7"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert (checkout / "dist" / "student" / "Makefile").is_file()
    assert (checkout / "dist" / "gradescope" / "autograder.zip").is_file()
    assert not (checkout / ".venv").exists()
    python = checkout / ".venv-grader" / "bin" / "python"
    found = subprocess.run(
        [str(python), "-c", "import importlib.util; print(importlib.util.find_spec('torch'))"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert found.strip() == "None"
    refused = subprocess.run(
        [str(python), "-m", "pip", "install", "--dry-run", "-q", "torch"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert refused.returncode != 0  # the refusal is real: this pip cannot install torch
