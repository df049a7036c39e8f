"""A relative path on a command line means what it means in the caller's directory, even where
the work happens elsewhere: the release's checks run in a temporary directory, a Dask worker in
its own. Run here from a directory that is not the repository, so a path taken relative to
the repository (or to a temporary directory) shows; tests/test_readme.py runs the README's
commands, relative paths and all, from the repository root."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader.batch import batch
from grader.run import api
from grader.workflows import cli
from tests.grading import REFERENCE, REPO


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.mark.slow
def test_release_builds_where_the_caller_says(tmp_path):
    _run(tmp_path, "-m", "grader.release.release", "student", "--out", "dist/student")
    assert (tmp_path / "dist" / "student" / "rubric.yaml").is_file()
    _run(tmp_path, "-m", "grader.release.release", "gradescope", "--out", "out", "--seed", "7")
    with zipfile.ZipFile(tmp_path / "out" / "autograder.zip") as archive:
        assert json.loads(archive.read("gradescope.json")) == {"seed": 7, "course": "course"}


@pytest.mark.slow
def test_grade_reads_and_writes_where_the_caller_says(tmp_path):
    shutil.copytree(REFERENCE, tmp_path / "mine", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO / "rubric.yaml", tmp_path / "rubric.yaml")
    _run(
        tmp_path,
        "-m",
        "grader",
        "grade",
        "--submission",
        "mine",
        "--rubric",
        "rubric.yaml",
        "--only",
        "micrograd.ops.add",
        "--json",
        "report/grade.json",
    )
    (item,) = json.loads((tmp_path / "report" / "grade.json").read_text())["items"]
    assert (item["id"], item["status"]) == ("micrograd.ops.add", "passed")


def test_batch_hands_its_workers_absolute_paths(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(
        batch, "run", lambda options, console: seen.append(options) or batch.BatchResult()
    )
    monkeypatch.chdir(tmp_path)
    args = cli.parser().parse_args(
        ["batch", "uploads", "--out", "grades", "--rubric", "r.yaml", "--reference", "ref"]
    )
    assert batch.main(args) == api.EXIT_OK
    (options,) = seen
    paths = [options.submissions, options.out, options.grading.rubric, options.grading.reference]
    assert paths == [tmp_path / name for name in ("uploads", "grades", "r.yaml", "ref")]
