"""Watch mode: the diff it prints, which assignment a save re-grades, and a real save."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from rich.console import Console
from watchfiles import Change

from grader.grading.options import GradeOptions
from grader.grading.scoring import ItemResult
from grader.report.document import GradeReport
from grader.run.submissions import Upload
from grader.workflows import watch
from grader.workflows.watch import changed_assignments, diff, totals, watch_target
from tests.helpers.grading import REPO, planted
from tests.helpers.shown_commands import Output

BUGGY_TANH = "1.0 - t"


def _item(ident: str, status: str, score: float, reason: str = "") -> ItemResult:
    return ItemResult(
        id=ident,
        assignment=ident.split(".")[0],
        title=ident,
        score=score,
        max_score=6,
        extra_credit=False,
        visibility="visible",
        status=status,
        bugs=[],
        feedback="",
        reason=reason,
    )


def test_diff_names_only_what_changed():
    before = {
        i.id: i
        for i in [
            _item("micrograd.ops.tanh", "failed", 0, "wrong gradient"),
            _item("micrograd.ops.add", "passed", 6),
            _item("micrograd.ops.mul", "failed", 0, "wrong gradient"),
            _item("micrograd.ops.exp", "failed", 0, "wrong forward value"),
        ]
    }
    after = {
        i.id: i
        for i in [
            _item("micrograd.ops.tanh", "passed", 6),
            _item("micrograd.ops.add", "error", 0, "NameError"),
            _item("micrograd.ops.mul", "failed", 0, "wrong gradient"),
            _item("micrograd.ops.exp", "partial", 3, "wrong gradient"),
        ]
    }
    assert diff(before, after) == [
        "[green]+ micrograd.ops.tanh now passes[/green] 6/6",
        "[red]- micrograd.ops.add now error: NameError[/red] 0/6",
        "[yellow]~ micrograd.ops.exp failed -> partial: wrong gradient[/yellow] 3/6",
    ]
    assert diff(after, after) == []
    assert totals(after, ["micrograd"]) == "micrograd 9/24"


def test_a_save_re_grades_only_the_assignments_whose_prepared_files_changed():
    both = ["micrograd", "babygrad"]
    before = {"micrograd": "m1", "babygrad": None}
    assert changed_assignments(before, {"micrograd": "m2", "babygrad": None}, both) == ["micrograd"]
    assert changed_assignments(before, {"micrograd": "m2", "babygrad": "b1"}, both) == both
    assert changed_assignments(before, {"micrograd": "m1", "babygrad": "b1"}, ["micrograd"]) == []
    assert changed_assignments(before, dict(before), both) == []


def test_a_folder_is_watched_for_its_sources_a_file_alone_in_its_folder(tmp_path):
    folder, accepts, recursive = watch_target(Upload("s", tmp_path, "folder"))
    assert (folder, recursive) == (tmp_path, True)
    assert accepts(Change.modified, str(tmp_path / "a" / "engine.py"))
    assert accepts(Change.modified, str(tmp_path / "lecture.ipynb"))
    assert not accepts(Change.modified, str(tmp_path / "notes.txt"))
    engine = tmp_path / "my_engine.ipynb"
    folder, accepts, recursive = watch_target(Upload("my_engine", engine, "ipynb"))
    assert (folder, recursive) == (tmp_path, False)
    assert accepts(Change.added, str(engine))
    assert not accepts(Change.modified, str(tmp_path / "other.ipynb"))


def test_every_grade_of_a_watch_forks_the_lanes_it_keeps_until_it_stops(tmp_path, monkeypatch):
    """The reference's check, the first grade and each re-grade go to one pool of warm lanes,
    one per assignment graded, started once and closed when the watch ends."""
    submission = planted(tmp_path, {"micrograd/engine.py": [("1.0 - t * t", BUGGY_TANH)]})
    engine = submission / "micrograd" / "engine.py"
    pools: list[Pool] = []
    runners: list[object] = []

    class Pool:
        def __init__(self, count: int, sandbox: str) -> None:
            self.count, self.sandbox, self.closed = count, sandbox, False
            pools.append(self)

        def __enter__(self) -> Pool:
            return self

        def __exit__(self, *exc: object) -> None:
            self.closed = True

    def graded(options: GradeOptions, runner: object) -> GradeReport:
        assert not pools[-1].closed
        runners.append(runner)
        passes = "1.0 - t * t" in (options.submission / "micrograd" / "engine.py").read_text()
        item = _item("micrograd.ops.tanh", *(("passed", 6) if passes else ("failed", 0)))
        return GradeReport("micrograd", 0, [item.to_json()], [], [], 0.0)

    def saves(*args: object, **kwargs: object) -> Iterator[set[tuple[Change, str]]]:
        yield set()  # the first wake: the first grade
        engine.write_text(engine.read_text().replace(BUGGY_TANH, "1.0 - t * t"))
        yield {(Change.modified, str(engine))}

    monkeypatch.setattr(watch, "Lanes", Pool)
    monkeypatch.setattr(watch, "grade", graded)
    monkeypatch.setattr(watch, "verify_reference", lambda o, r, runner: runners.append(runner))
    monkeypatch.setattr(watch.watchfiles, "watch", saves)
    options = GradeOptions(submission, assignment="micrograd", sandbox="none")
    console = Console(record=True, width=200)
    watch.run(options, Upload("s", submission, "folder"), console)
    (pool,) = pools
    assert (pool.count, pool.sandbox, pool.closed) == (1, "none", True)
    assert runners == [pool] * 3
    assert "+ micrograd.ops.tanh now passes 6/6" in console.export_text()


@contextmanager
def watching(submission: Path) -> Iterator[Output]:
    """``watch`` on ``submission`` for the tanh item; Ctrl-C at the end must exit 0."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grader",
            "watch",
            "--submission",
            str(submission),
            "--only",
            "micrograd.ops.tanh",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        yield Output(proc)
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
    assert code == 0


@pytest.mark.slow
def test_saving_a_fix_prints_that_the_item_now_passes(tmp_path):
    submission = planted(tmp_path, {"micrograd/engine.py": [("1.0 - t * t", BUGGY_TANH)]})
    engine = submission / "micrograd" / "engine.py"
    with watching(submission) as output:
        first = output.wait_for("(Ctrl-C to stop)", 120)
        assert "micrograd 0/6" in first and "micrograd.ops.tanh failed" in first
        engine.write_text(engine.read_text().replace(BUGGY_TANH, "1.0 - t * t"))
        after = output.wait_for("micrograd 6/6", 120)[len(first) :]
        assert "engine.py saved: re-grading micrograd" in after
        assert "+ micrograd.ops.tanh now passes 6/6" in after
        (submission / "micrograd" / "notes.txt").write_text("not Python: ignored")
        engine.write_text(engine.read_text() + "# a comment changes nothing\n")
        again = output.wait_for("no item changed", 120)
        assert again.count("re-grading") == 2  # the .txt file was not a reason to re-grade


@pytest.mark.slow
def test_a_single_file_is_watched_and_its_neighbours_are_not(tmp_path):
    source = planted(tmp_path, {"micrograd/engine.py": [("1.0 - t * t", BUGGY_TANH)]})
    engine = tmp_path / "my_engine.py"
    engine.write_text((source / "micrograd" / "engine.py").read_text())
    with watching(engine) as output:
        first = output.wait_for("(Ctrl-C to stop)", 120)
        assert "upload: micrograd: my_engine.py" in first and "micrograd 0/6" in first
        (tmp_path / "other.py").write_text("class Value: pass\n")  # not part of the upload
        engine.write_text(engine.read_text().replace(BUGGY_TANH, "1.0 - t * t"))
        after = output.wait_for("micrograd 6/6", 120)[len(first) :]
        assert "my_engine.py saved: re-grading micrograd" in after and "other.py" not in after
        assert "+ micrograd.ops.tanh now passes 6/6" in after


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("target", ["grade", "watch"])
def test_make_passes_each_only_item_through(target):
    # under `make test` the outer make's flags and variables (ARGS) would reach this one
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    done = subprocess.run(
        ["make", "-n", target, "SUBMISSION=sub", "ARGS=", "ONLY=micrograd.ops.tanh micrograd.topo"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    (command,) = [line.strip() for line in done.stdout.splitlines() if "-m grader" in line]
    assert f"-m grader {target} --submission sub" in command
    assert command.endswith("--only micrograd.ops.tanh --only micrograd.topo")
