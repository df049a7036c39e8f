"""``make test`` relies on ``--dist loadgroup``: the tests of one ``xdist_group`` run on one
worker, in order, so they share a costly session fixture (a graded class, a built release) and
``tests/grading/test_seeds.py``'s reference records before the engines that replay it. pytest 9.2
and pytest-xdist 3.8 silently ignore the groups (pytest-dev/pytest-xdist#1386, hence the pin in
pyproject.toml): this test fails where that happens."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

MODULE = """
import pytest

pytestmark = pytest.mark.xdist_group("together")


@pytest.mark.parametrize("n", range(6))
def test_grouped(n):
    pass


@pytest.mark.parametrize("n", range(6))
@pytest.mark.xdist_group("apart")
def test_elsewhere(n):
    pass
"""


def test_a_group_runs_on_one_worker_in_order(tmp_path: Path) -> None:
    (tmp_path / "test_groups.py").write_text(MODULE)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-v",
            "-p",
            "no:cacheprovider",
            "test_groups.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ran = re.findall(r"\[(gw\d)\] .*PASSED test_groups.py::test_grouped\[(\d)\]", done.stdout)
    assert [n for _, n in ran] == [str(n) for n in range(6)], done.stdout
    assert len({worker for worker, _ in ran}) == 1, done.stdout
