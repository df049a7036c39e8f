"""The instructor's small tools as they meet their users: the help text, the Classroom
workflow's steps on a runner that is not ubuntu-24.04, the Classroom reporter without a grade,
and reports other people can read."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

from grader.atomic import write_atomically
from grader.layout import TEMPLATES
from grader.workflows.cli import parser

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
