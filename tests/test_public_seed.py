"""Grades of record need a secret seed: with none, batch and the Gradescope build say so and
name the flag (the rubric's seed is public, so its graphs are known to every student)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from grader.batch import batch
from grader.release import release
from grader.workflows.cli import parser


def batch_args(folder: Path, *more: str) -> argparse.Namespace:
    return parser("batch").parse_args(["batch", str(folder), "--out", str(folder / "out"), *more])


@pytest.mark.parametrize(("more", "warned"), [((), True), (("--seed", "42"), False)])
def test_batch_warns_without_a_secret_seed(tmp_path, capsys, monkeypatch, more, warned):
    def interrupted(options, console):
        raise KeyboardInterrupt  # the warning comes first: no grade is needed to see it

    monkeypatch.setattr(batch, "run", interrupted)
    (tmp_path / "uploads").mkdir()
    batch.main(batch_args(tmp_path / "uploads", *more))
    said = capsys.readouterr().err
    assert ("no secret seed given" in said and "--seed N" in said) == warned, said


@pytest.mark.parametrize(("more", "warned"), [((), True), (("--seed", "42"), False)])
def test_the_gradescope_build_warns_without_a_secret_seed(
    tmp_path, capsys, monkeypatch, more, warned
):
    monkeypatch.setattr(release, "build_gradescope", lambda out, seed, course: out)
    assert release.main(["gradescope", "--out", str(tmp_path), *more]) == 0
    said = capsys.readouterr().err
    assert ("no secret seed given" in said and "SEED=N" in said) == warned, said
