"""Replay: a grade that replays recorded examples is the grade Hypothesis would have given.

The proof at scale is elsewhere: every planted bug (``test_blame``) and the reference over 20
seeds (``test_seeds``) are graded with and without replay, and the two JSON documents must be
equal but for durations. Here: every grading test is recorded and replayed, nothing secret or
unreadable is replayed, and a recording is exactly what was drawn.
"""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from grader.grading import replay
from grader.grading.suites import test_babygrad, test_micrograd
from grader.language.dags import diamonds
from grader.language.graphs import Graph, Node
from grader.layout import REPLAY_CACHE
from grader.workflows.arguments import add_grading_options, grade_options
from tests.grading import REFERENCE, comparable, grade_report

HYPOTHESIS_TESTS = sum(getattr(test, "is_hypothesis_test", False)
                       for suite in (test_micrograd, test_babygrad)
                       for test in vars(suite).values())


@pytest.mark.slow
def test_every_grading_test_is_recorded_then_replayed_to_the_same_grade(tmp_path):
    recordings = tmp_path / "recordings"
    first = grade_report(REFERENCE, replay=recordings)
    files = sorted(recordings.iterdir())
    assert len(files) == HYPOTHESIS_TESTS
    written = {path: path.stat().st_mtime_ns for path in files}
    again = grade_report(REFERENCE, replay=recordings)
    # A test that fell back to Hypothesis would have written its recording again.
    assert {path: path.stat().st_mtime_ns for path in files} == written
    assert comparable(again) == comparable(first)


def _options(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_grading_options(parser)
    return parser.parse_args(list(argv))


def test_a_secret_seed_or_no_replay_never_replays():
    assert grade_options(_options(), REFERENCE).replay == REPLAY_CACHE
    assert grade_options(_options("--seed", "5"), REFERENCE).replay is None
    assert grade_options(_options("--no-replay"), REFERENCE).replay is None


def test_an_unreadable_recording_is_not_replayed(tmp_path):
    recordings = replay.Recordings.open(str(tmp_path), "rubric", 1)
    recordings.start()
    recordings.record({"dag": diamonds(2)})
    recordings.save("t", 10)
    assert recordings.load("t", 10) is not None
    assert recordings.load("t", 11) is None
    (path,) = tmp_path.iterdir()
    path.write_text('{"examples": [{"dag": {"leaves": "x"')
    assert recordings.load("t", 10) is None


def test_a_recording_decodes_to_exactly_what_was_drawn():
    graph = Graph("tensor", (np.arange(6.0).reshape(2, 3) / 8,),
                  (Node("sum", (0,), (1,)), Node("mul_scalar", (1,), 0.5)))
    example = {"case": (graph, np.ones(2), [np.float64(1.5), 2.0]), "dag": diamonds(3),
               "leaves": 2, "weight": -0.25}
    decoded = replay.decode_example(replay.encode_example(example))
    assert all(replay._same(decoded[k], example[k]) for k in example)
    assert repr(decoded) == repr(example)
    assert not replay._same(np.float32(0.5), np.float64(0.5))
    with pytest.raises(replay.NotReplayable):
        replay.encode_example({"what": object()})
    with pytest.raises(replay.NotReplayable):  # the param would come back a float
        replay.encode_example({"graph": Graph("scalar", (np.array(1.0),),
                                              (Node("powk", (0,), np.float64(2.0)),))})
