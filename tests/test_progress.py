"""A long batch's progress: the uploads being graded, the slowest, the time left; into a log, a
line every N uploads (issue 50)."""

from __future__ import annotations

import io

from rich.console import Console

from grader.batch import progress
from grader.batch.progress import BatchProgress, Tracker


def test_the_line_names_the_current_and_the_slowest_upload_and_the_time_left(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    tracker = Tracker(total=10, done=4)  # four from the ledger
    tracker.start("alice")
    tracker.start("bob")
    now[0] += 30
    tracker.finish("alice", failed=False)
    tracker.start("carol")
    now[0] += 90
    tracker.finish("dave", failed=True, seconds=7.0)  # a Dask worker's, never started here
    assert tracker.line() == (
        "6/10 uploads; 1 failed; now: bob 2 min 0 s, carol 1 min 30 s; "
        "slowest: alice 30 s; about 4 min 0 s left"
    )


def test_into_a_log_a_line_every_n_uploads_and_one_at_the_end():
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    with BatchProgress(console, total=7, done=0, every=3) as bar:
        for student in "abcdefg":
            bar.tracker.start(student)
            bar.finished(student, failed=student == "c")
    lines = out.getvalue().splitlines()
    assert [line.split(";")[0] for line in lines] == ["3/7 uploads", "6/7 uploads", "7/7 uploads"]
    assert lines[0].startswith("3/7 uploads; 1 failed; slowest: ")
    assert "left" in lines[0] and "left" not in lines[-1]
