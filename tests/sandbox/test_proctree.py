"""``proctree.Exit``: whether a process has ended, by its pidfd or, without one, from /proc.

A forked worker's run asks it before every request, of the worker and of its zygote: it must
say "ended" for a zombie (a worker its zygote has not reaped yet) as for a reaped process, and
the two ways of telling must agree."""

from __future__ import annotations

import os
import subprocess

import pytest

from grader.sandbox import proctree
from tests.helpers.sandboxes import eventually


@pytest.fixture(params=["pidfd", "/proc"])
def exit_of(request, monkeypatch):
    """``Exit`` as this kernel gives it, and as one without pidfds does."""
    if request.param == "/proc":
        monkeypatch.delattr(os, "pidfd_open")
    return proctree.Exit


def sleeper() -> subprocess.Popen:
    """A child that runs until its stdin is closed."""
    return subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)


def test_a_process_has_ended_once_a_zombie_and_once_reaped(exit_of):
    child = sleeper()
    watch = exit_of(child.pid)
    assert not watch.ended()
    child.stdin.close()
    assert eventually(lambda: not proctree.running(child.pid))  # a zombie: not reaped yet
    assert watch.ended()
    child.wait()
    assert watch.ended()


def test_a_pid_that_is_no_process_has_ended(exit_of):
    child = sleeper()
    child.stdin.close()
    child.wait()
    assert exit_of(child.pid).ended()


def test_a_closed_watch_still_answers(exit_of):
    child = sleeper()
    watch = exit_of(child.pid)
    watch.close()
    watch.close()
    assert not watch.ended()
    child.stdin.close()
    child.wait()
    assert watch.ended()
