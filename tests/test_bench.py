"""``make bench``'s buggy engines: every pair of classic bugs plants, and each bug costs points
in its own assignment (a pair that planted nothing would flatter the batch's throughput)."""

from __future__ import annotations

import pytest

from grader.workflows import bench
from grader.workflows.bench import CLASSIC_BUGS, with_classic_bugs
from tests.grading import REFERENCE, grade_report


@pytest.mark.slow
@pytest.mark.parametrize("which", range(len(CLASSIC_BUGS)))
def test_each_pair_of_classic_bugs_costs_points_in_both_assignments(tmp_path, which):
    report = grade_report(with_classic_bugs(REFERENCE, tmp_path / "buggy", which))
    lost = {item["assignment"] for item in report.items if item["score"] < item["max_score"]}
    assert lost == {"micrograd", "babygrad"}


def test_a_bug_whose_text_is_not_in_the_reference_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "CLASSIC_BUGS", [{"micrograd/engine.py": ("no such line", "x")}])
    with pytest.raises(ValueError, match="exactly once"):
        with_classic_bugs(REFERENCE, tmp_path / "buggy")
