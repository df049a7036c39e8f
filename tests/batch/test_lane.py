"""Batch lanes: a grade forked from a warm lane is the grade of a fresh process (PyTorch loaded
in the lane or not); a lane keeps its recordings in memory, never on disk; a lane that dies,
or answers another run's request, costs no submission its grade."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest

from grader.batch.lane import Lanes, _fork, _runs, _zygote_ahead
from grader.grading.options import IN_MEMORY
from grader.layout import DEFAULT_RUBRIC
from grader.run.api import GradeOptions, UsageFailure, grade
from grader.sandbox import sandbox, sharing
from grader.sandbox.proctree import children
from grader.sandbox.warm import MODULE
from tests.helpers.grading import REFERENCE, comparable, planted
from tests.helpers.planted import TANH_DERIVATIVE
from tests.helpers.programs import needs_bwrap, needs_torch
from tests.helpers.sandboxes import eventually

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("lane")]

ONLY = ("micrograd.ops", "micrograd.sugar", "babygrad.ops.mul", "babygrad.tensor_ops")


def test_a_lane_grades_as_a_fresh_process_and_replays_from_memory_only(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the lane inherits it
    buggy = planted(tmp_path / "buggy", {"micrograd/engine.py": [TANH_DERIVATIVE.pair]})
    fresh = {
        name: comparable(grade(GradeOptions(engine, only=ONLY)))
        for name, engine in (("reference", REFERENCE), ("buggy", buggy))
    }
    with Lanes(2) as lanes:
        for _ in range(2):  # the second time, every passing test replays from the lane
            for name, engine in (("reference", REFERENCE), ("buggy", buggy)):
                forked = grade(GradeOptions(engine, only=ONLY, replay=IN_MEMORY), lanes)
                assert comparable(forked) == fresh[name]
        assert all(lane.known for lane in lanes._all)
        assert all(lane.answers for lane in lanes._all)  # the reference's, kept for the next
    assert not (tmp_path / "cache").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["buggy"]


def test_a_forked_run_hands_the_lane_the_probes_it_settled(tmp_path, monkeypatch):
    """The sandbox's probes a run found to work stay with the lane, for its next forks."""
    settled = ("probe", "bwrap", 64000, ("/usr",), (), (), "/usr/bin/python3")
    monkeypatch.setattr(sandbox, "_probe_cache", {settled: (True, "")})
    fork = _fork(["--version"], str(tmp_path))  # the child has it, as if it probed
    sandbox._probe_cache.clear()
    ((returncode, _, _),) = _runs([fork], sharing.Lane())
    assert returncode == 0
    assert sandbox._probe_cache == {settled: (True, "")}


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="workers are forked only with a uid of their own")
def test_the_uploads_a_lane_grades_share_the_zygote_it_started_at_its_warm_up():
    """The lane starts its zygote (bubblewrap, the lane's own child) as it warms up, before any
    run asks for it; it forks the first upload's workers (no other is started) and the
    next upload's too, and the grade is a fresh process's."""
    options = GradeOptions(REFERENCE, assignment="micrograd", only=ONLY[:1])
    fresh = comparable(grade(options))
    with Lanes(1) as lanes:
        (lane,) = lanes._all
        ahead = eventually(lambda: _zygotes(lane._process.pid))
        assert len(ahead) == 1
        assert comparable(grade(options, lanes)) == fresh
        assert _zygotes(lane._process.pid) == ahead
        assert comparable(grade(options, lanes)) == fresh
        assert _zygotes(lane._process.pid) == ahead


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="workers are forked only with a uid of their own")
@pytest.mark.parametrize(
    ("mode", "root", "started"),
    [("auto", True, 1), ("bwrap", True, 1), ("none", True, 0), ("auto", False, 0)],
)
def test_a_lane_starts_a_zygote_ahead_only_where_one_would_fork_its_workers(
    monkeypatch, mode, root, started
):
    """Bubblewrap as root, each worker a uid of its own: the zygote starts ahead. Without
    bubblewrap (``--sandbox none``), or not as root, workers start alone: none is started."""
    if not root:
        monkeypatch.setattr(os, "geteuid", lambda: 1000)
    zygotes = sharing.Lane()
    try:
        _zygote_ahead(zygotes, mode)
        assert len(_zygotes(os.getpid())) == started
    finally:
        zygotes.close()
    assert not _zygotes(os.getpid())


def _zygotes(pid: int) -> set[int]:
    """The zygotes' sandboxes among ``pid``'s children (bubblewrap running the zygote, not a
    probe nor the lane's other helpers)."""
    found = set()
    for child in children(pid):
        with contextlib.suppress(OSError), open(f"/proc/{child}/cmdline", "rb") as cmdline:
            words = cmdline.read().split(b"\0")
            if Path(words[0].decode()).name == "bwrap" and MODULE.encode() in words:
                found.add(child)
    return found


def test_a_lane_that_dies_costs_no_grade(tmp_path):
    with Lanes(1) as lanes:
        (lane,) = lanes._all
        lane._process.kill()
        lane._process.wait()
        report = grade(GradeOptions(REFERENCE, assignment="micrograd", only=ONLY[:1]), lanes)
        assert report.score == report.max_score > 0
        assert lane._process.poll() is None  # a new lane took its place
        os.kill(lane._process.pid, 0)


def test_a_lane_says_what_went_wrong_as_a_fresh_process_does(tmp_path):
    rubric = tmp_path / "rubric.yaml"  # valid, but a grading test names an item it lacks
    rubric.write_text(DEFAULT_RUBRIC.read_text().replace("id: micrograd.deep", "id: micrograd.x"))
    with Lanes(1) as lanes, pytest.raises(UsageFailure) as forked:
        grade(GradeOptions(REFERENCE, assignment="micrograd", rubric=rubric), lanes)
    with pytest.raises(UsageFailure) as fresh:
        grade(GradeOptions(REFERENCE, assignment="micrograd", rubric=rubric))
    assert type(forked.value) is type(fresh.value) is UsageFailure
    assert str(forked.value) == str(fresh.value) and "micrograd.deep" in str(fresh.value)


def _holds_torch(pid: int) -> bool:
    with open(f"/proc/{pid}/maps") as maps:
        return any("libtorch" in line for line in maps)


@needs_torch
def test_a_lane_keeps_torch_once_a_run_needed_it_and_grades_as_before():
    """Without a reference, PyTorch is the first oracle: the lane imports it after the first
    such run, and the runs forked with it loaded grade as a fresh process does."""
    options = GradeOptions(
        REFERENCE, assignment="micrograd", only=("micrograd.ops.tanh",), reference=None
    )
    fresh = comparable(grade(options))
    assert "pytorch" in fresh["oracles"]
    with Lanes(1) as lanes:
        (lane,) = lanes._all
        assert not _holds_torch(lane._process.pid)
        assert comparable(grade(options, lanes)) == fresh
        assert _holds_torch(lane._process.pid)
        assert comparable(grade(options, lanes)) == fresh


def test_a_reply_meant_for_another_run_is_never_taken_for_this_one(tmp_path):
    """A lane asked once more than it was heard (a request whose reply nobody read): the next
    run reads that reply first, while its own results file is not written yet. It must see the
    reply is not its own, and grade anyway."""
    with Lanes(1) as lanes:
        (lane,) = lanes._all
        stale = {"id": -1, "args": ["--version"], "cwd": str(tmp_path), "recordings": {}}
        lane._process.stdin.write(json.dumps(stale) + "\n")
        lane._process.stdin.flush()
        report = grade(GradeOptions(REFERENCE, assignment="micrograd", only=ONLY[:1]), lanes)
        assert report.score == report.max_score > 0
        assert lane._process.poll() is None  # a new lane took its place
