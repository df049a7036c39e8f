"""Every shell command in README.md works as written (``tests/helpers/shown_commands.py`` says how
they run, and what the placeholders stand for); ``tests/project/test_docs.py`` runs the
documentation pages' own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.shown_commands import (
    README,
    cases,
    commands_of,
    placeholders_made_real,
    run_as_shown,
)

pytestmark = pytest.mark.slow

COMMANDS = commands_of([README])


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return placeholders_made_real(tmp_path_factory)


def test_the_readme_shows_the_two_commands_and_the_report():
    assert {"make grade", "make test"} <= set(COMMANDS)
    assert "](docs/report.png)" in README.read_text()


@pytest.mark.parametrize("command", cases(COMMANDS))
def test_command(root, command):
    run_as_shown(root, command)
