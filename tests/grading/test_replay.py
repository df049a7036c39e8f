"""Replay: a grade that replays recorded examples is the grade Hypothesis would have given.

The proof at scale is elsewhere: every planted bug (``test_blame``: without replay, and
replaying its lane's memory, the reference's runs and other bugs' failing runs) and the
reference over 20 seeds (``test_seeds``: without replay, and replaying a folder of its
recordings) are graded with and without replay, and the JSON documents must be equal but for
durations. Here: every grading test is recorded into a folder and replayed, passing or
failing, its own failing runs included; a replay follows only the run its outcomes match and
gives up at the first outcome none had; nothing secret or unreadable is replayed; and a
recording is exactly what was drawn.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from grader.checks import ops
from grader.grading import replay
from grader.grading.suites import test_babygrad, test_micrograd
from grader.language.dags import diamonds
from grader.language.graphs import Graph, Node
from grader.layout import REPLAY_CACHE
from grader.oracles import reference
from grader.run.api import GradeOptions, grade
from grader.run.arguments import add_grading_options, grade_options
from grader.sandbox.launch import WorkerFailure
from grader.workflows.bench import with_classic_bugs
from tests.helpers import fake_worker as fake
from tests.helpers.grading import REFERENCE, comparable, grade_report, runs_in_this_course

HYPOTHESIS_TESTS = sum(
    getattr(test, "is_hypothesis_test", False) and runs_in_this_course(test)
    for suite in (test_micrograd, test_babygrad)
    for test in vars(suite).values()
)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["reference", "classic bugs"])
def test_every_grading_test_is_recorded_then_replayed_to_the_same_grade(tmp_path, engine):
    submission = (
        REFERENCE if engine == "reference" else with_classic_bugs(REFERENCE, tmp_path / "buggy")
    )
    recordings = tmp_path / "recordings"
    fresh = grade_report(submission, replay=None)
    first = grade_report(submission, replay=recordings)
    files = sorted(recordings.iterdir())
    # A test not gradable (tanh's accumulate test on the classic tanh bug, mul's broadcasting
    # test on the classic mul bug) ends at once and, as an abort, is never recorded: each
    # grade runs it under Hypothesis.
    waiting = [t["test"] for item in fresh.items for t in item["not_gradable"]]
    assert waiting == (
        [] if engine == "reference" else ["test_tanh_accumulates", "test_broadcasting_mul"]
    )
    assert len(files) == HYPOTHESIS_TESTS - len(waiting)
    written = {path: path.stat().st_mtime_ns for path in files}
    again = grade_report(submission, replay=recordings)
    # A test that fell back to Hypothesis would have written its recording again.
    assert {path: path.stat().st_mtime_ns for path in files} == written
    assert comparable(again) == comparable(first) == comparable(fresh)
    failed = {item["id"] for item in fresh.items if item["status"] != "passed"}
    reported = [path for path in files if json.loads(path.read_text())["reported"] is not None]
    if engine == "reference":
        assert not failed and not reported
    else:  # each bug fails its op's item and its assignment's whole graphs, shrunk and replayed
        assert failed == {
            "micrograd.ops.tanh",
            "micrograd.graphs",
            "babygrad.ops.mul",
            "babygrad.graphs",
        }
        assert len(reported) >= len(failed)


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
    recordings.save("t", 10, None)
    assert len(recordings.load("t", 10)) == 1
    assert replay.Recordings.open(str(tmp_path), "rubric", 1).load("t", 11) == []
    (path,) = tmp_path.iterdir()
    path.write_text('{"calls": [[{"dag": {"leaves": "x"')
    assert replay.Recordings.open(str(tmp_path), "rubric", 1).load("t", 10) == []


def _recorded_run(recordings: replay.Recordings, body, examples: list[int]) -> None:
    """What the plugin does around a Hypothesis run: record each call and how it ended; the
    test reports the last failure (as a shrink's final re-run does)."""
    recordings.start()
    reported = None
    for x in examples:
        recordings.record({"x": x})
        try:
            body(x)
        except AssertionError as failure:
            recordings.failed(failure)
            reported = failure
        recordings.asked([("micrograd", "op", {"x": x})])
    recordings.save("t", 3, reported)


def _attempts(body, seen: list[int]):
    def attempt(example):
        seen.append(example["x"])
        try:
            body(example["x"])
        except AssertionError as failure:
            return failure
        return None

    return attempt


def _passes(x):
    pass


def _small(x):
    assert x < 10, "too big"


def _even(x):
    assert x % 2 == 0, "odd"


def _two_runs(folder):
    """As Hypothesis would: the same history, the same next call. An engine that passes
    everything is asked 1, 12, 3; one that fails from 10 up fails at 12, then shrinks."""
    recordings = replay.Recordings.open(str(folder), "rubric", 1)
    _recorded_run(recordings, _passes, [1, 12, 3])
    _recorded_run(recordings, _small, [1, 12, 11, 10, 10])
    return recordings.load("t", 3)


def test_a_folder_keeps_only_the_newest_runs_of_a_test(tmp_path):
    recordings = replay.Recordings.open(str(tmp_path), "rubric", 1)
    for n in range(replay.RUNS_ON_DISK + 2):
        _recorded_run(recordings, _passes, [n])
    kept = replay.Recordings.open(str(tmp_path), "rubric", 1).load("t", 3)
    assert sorted(run.calls[0].example["x"] for run in kept) == list(
        range(2, replay.RUNS_ON_DISK + 2)
    )


def _asks(plans: list[list[int]]):
    """A replay's ``plan``: what it planned to ask, by example."""
    return lambda requests: plans.append([case["x"] for _, _, case in requests])


def test_a_replay_follows_the_recorded_run_its_outcomes_match(tmp_path):
    runs = _two_runs(tmp_path)
    assert [run.reported for run in runs] == [None, 4]  # the passing run first
    seen: list[int] = []
    plans: list[list[int]] = []
    assert replay.follow(runs, _attempts(_passes, seen), _asks(plans)) is None
    assert seen == [1, 12, 3] and plans == [[1, 12, 3]]
    seen.clear()
    plans.clear()
    failure = replay.follow(runs, _attempts(_small, seen), _asks(plans))
    assert str(failure).startswith("too big") and seen == [1, 12, 11, 10, 10]
    assert plans == [[1, 12, 3], [11, 10, 10]]  # along the passing run, then the failing one


def test_a_replayed_failure_is_the_one_its_run_reported(tmp_path):
    (run,) = [run for run in _two_runs(tmp_path) if run.reported is not None]
    assert run.reported == 4
    assert [call.outcome is None for call in run.calls] == [True, False, False, False, False]
    raised = []

    def attempt(example):
        failure = _attempts(_small, [])(example)
        raised.append(failure)
        return failure

    assert replay.follow([run], attempt, _asks([])) is raised[4]


def test_an_outcome_no_run_had_or_runs_that_disagree_diverge(tmp_path):
    runs = _two_runs(tmp_path)
    seen: list[int] = []
    with pytest.raises(replay.Diverged):  # fails at 1, where every recorded engine passed
        replay.follow(runs, _attempts(_even, seen), _asks([]))
    assert seen == [1]

    def big_is_wrong(x):  # fails at 12, but from another line: another origin
        if x >= 10:
            raise AssertionError("too big")

    with pytest.raises(replay.Diverged):
        replay.follow(runs, _attempts(big_is_wrong, []), _asks([]))
    for n, impossible in enumerate(
        [
            [1, 12, 3, 4],  # the same history, but more calls
            [1, 2],
        ]
    ):  # the same history, another next call
        folder = tmp_path / str(n)
        assert replay.follow(_two_runs(folder), _attempts(_passes, []), _asks([])) is None
        recordings = replay.Recordings.open(str(folder), "rubric", 1)
        _recorded_run(recordings, _passes, impossible)
        with pytest.raises(replay.Diverged):
            replay.follow(recordings.load("t", 3), _attempts(_passes, []), _asks([]))


def test_a_recording_decodes_to_exactly_what_was_drawn():
    graph = Graph(
        "tensor",
        (np.arange(6.0).reshape(2, 3) / 8,),
        (Node("sum", (0,), (1,)), Node("mul_scalar", (1,), 0.5)),
    )
    example = {
        "case": (graph, np.ones(2), [np.float64(1.5), 2.0]),
        "dag": diamonds(3),
        "leaves": 2,
        "weight": -0.25,
    }
    decoded = replay.decode_example(replay.encode_example(example))
    assert all(replay._same(decoded[k], example[k]) for k in example)
    assert repr(decoded) == repr(example)
    assert not replay._same(np.float32(0.5), np.float64(0.5))
    with pytest.raises(replay.NotReplayable):
        replay.encode_example({"what": object()})
    with pytest.raises(replay.NotReplayable):  # the param would come back a float
        replay.encode_example(
            {"graph": Graph("scalar", (np.array(1.0),), (Node("powk", (0,), np.float64(2.0)),))}
        )


# ------------------------------------------------------------------ asking ahead, in batches


def _mul(n: int) -> tuple[Graph, np.ndarray]:
    return Graph(
        "tensor", (np.full((2,), n / 4), np.arange(2.0) - n), (Node("mul", (0, 1)),)
    ), np.ones(2)


def _checked(grading, numbers) -> list[str]:
    """Check ``Mul`` on the cases ``numbers``; what the worker was asked (by probe)."""
    for n in numbers:
        ops.check_op(grading, *_mul(n))
    return fake.asked(grading)


class BatchesTimeOut(fake.FakeWorker):
    """A worker whose batches of more than one case run out of time (a slow engine)."""

    def request(self, message, budget):
        if len(message["cases"]) > 1:
            self.asked.append("batch")
            raise WorkerFailure("timeout", f"timed out after {budget:g} s of CPU time")
        return super().request(message, budget)


def test_a_replay_asks_its_planned_requests_in_batches():
    recorded = fake.session("babygrad.ops.mul")
    assert _checked(recorded, range(20)) == ["load"] + ["op"] * 20
    requests = list(recorded.asked)
    replayed = fake.session("babygrad.ops.mul")
    replayed.plan(requests)
    assert _checked(replayed, range(20)) == ["load", "op", "op"]  # 16 cases, then 4
    assert replayed.checks == recorded.checks == 20


def test_a_request_the_plan_did_not_expect_drops_the_rest_of_it():
    recorded = fake.session("babygrad.ops.mul")
    _checked(recorded, range(20))
    replayed = fake.session("babygrad.ops.mul")
    replayed.plan(list(recorded.asked))
    # The 16 cases answered at once cover 0..15; case 99 is not the planned 3.
    assert _checked(replayed, [0, 1, 2, 99, 4]) == ["load", "op", "op", "op"]


def test_a_batch_that_goes_wrong_ends_batching_and_each_request_is_asked_alone():
    recorded = fake.session("babygrad.ops.mul")
    _checked(recorded, range(20))
    replayed = fake.session("babygrad.ops.mul", worker=BatchesTimeOut)
    replayed.plan(list(recorded.asked))
    assert _checked(replayed, range(3)) == ["load", "batch", "op", "op", "op"]
    assert not replayed.batching and not replayed.aborts
    replayed.plan(list(recorded.asked))
    assert _checked(replayed, range(3))[-3:] == ["op", "op", "op"]


def test_a_run_that_could_not_have_happened_is_not_loaded(tmp_path):
    """A passing run that met a failure, or a failing one that reports a call that passed,
    is no Hypothesis run: such a file (damaged, or edited) is never replayed."""
    recordings = replay.Recordings.open(str(tmp_path), "rubric", 1)
    _recorded_run(recordings, _small, [1, 12, 11, 10, 10])
    (path,) = tmp_path.iterdir()
    run = json.loads(path.read_text())
    for reported in (None, 0):
        path.write_text(json.dumps({**run, "reported": reported}))
        assert replay.Recordings.open(str(tmp_path), "rubric", 1).load("t", 3) == []
    path.write_text(json.dumps(run))
    assert len(replay.Recordings.open(str(tmp_path), "rubric", 1).load("t", 3)) == 1


@pytest.mark.slow
def test_a_grade_of_its_own_takes_the_reference_answers_the_last_one_kept(tmp_path):
    """Without a lane to hold them, a grade replaying from a folder keeps the reference's
    answers there (as Gradescope's recording and a student's ``make grade`` do), and the next
    grade, in processes of its own, evaluates nothing on the reference again: it would have
    kept what it evaluated. The grade is the same."""
    folder = tmp_path / "recordings"
    first = grade(GradeOptions(REFERENCE, replay=folder))
    kept = _answer_files(folder)
    assert kept
    again = grade(GradeOptions(REFERENCE, replay=folder))
    assert _answer_files(folder) == kept  # not one written again, even alike
    assert comparable(again) == comparable(first)


def _answer_files(folder: Path) -> dict[Path, tuple[int, int]]:
    """The folder's files of reference answers, each with its inode and time of writing."""
    return {
        path: (path.stat().st_ino, path.stat().st_mtime_ns)
        for path in reference.answers_beside(folder).glob("answers.*.json")
    }
