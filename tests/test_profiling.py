"""``make bench``'s profile: py-spy's raw samples summed by kind of process and function."""

from __future__ import annotations

from grader.workflows import profiling
from grader.workflows.profiling import RATE, kind, parsed

RAW = (
    'process 1:"python -m grader grade --submission x";thread (0x1);<module> (a.py:1);'
    f"_find_and_load (<frozen importlib._bootstrap>:1);load (b.py:2) {RATE}\n"
    'process 1:"python -m grader grade";process 2:"python -I -m pytest s.py\n-p x";'
    f"thread (0x2);run (c.py:3) {RATE // 2}\n"
    'process 1:"python -m grader grade";process 3:"python -I -m grader.worker.runner";'
    f"thread (0x3);answer (d.py:4) {RATE * 3}\n"
)


def test_each_process_counts_towards_its_kind_and_its_innermost_function():
    found = parsed(RAW)
    assert dict(found.seconds) == {"command": 1.0, "grading": 0.5, "worker": 3.0}
    assert found.importing["command"] == 1.0
    assert found.functions["worker"] == {"answer (d.py:4)": 3.0}
    assert found.lines()[0].startswith("  sampled CPU 4.50 s")


def test_the_root_process_is_the_command_whatever_its_command_line_reads():
    found = parsed(f'process 7:"";thread (0x1);main (a.py:1) {RATE}\n')
    assert dict(found.seconds) == {"command": 1.0}


def test_a_lane_is_a_grading_process_and_a_probe_is_another_helper():
    assert kind("python -I -m grader.batch.lane") == "grading"
    assert kind("python -I -c print(1)") == "other"


FAKE_PY_SPY = """#!/bin/bash
while [ "$1" != -o ]; do shift; done
out=$2
printf '%s' "${@: -1}" > "$out"  # its samples, written first: what a stop would write
trap 'kill $!; exit 0' INT
sleep 120 &
wait $!
rm -f "$out"  # then it leaves without a word: a profile that waited gets nothing
"""
"""A py-spy that samples on and on, and keeps its samples only when told to stop."""


def test_a_sampler_that_never_stops_is_stopped_and_its_samples_kept(tmp_path, monkeypatch):
    spy = tmp_path / "py-spy"
    spy.write_text(FAKE_PY_SPY)
    spy.chmod(0o755)
    monkeypatch.setattr(profiling, "py_spy", lambda: str(spy))
    monkeypatch.setattr(profiling, "TIMEOUT_S", 1.0)
    found = profiling.profile([RAW.splitlines()[0]])
    assert found is not None and dict(found.seconds) == {"command": 1.0}
