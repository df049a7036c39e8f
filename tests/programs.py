"""The optional programs some tests need, found the way the grader finds them.

A student's laptop, a fresh CI image or an instructor's machine often lacks Graphviz, Chromium
or bubblewrap, and ``make test`` must still pass there. A test that needs one skips with a
reason in one format, naming the program and its Debian package, so ``tests/conftest.py`` can
say in one line at the end of the run what did not run for want of which program. What can be
checked without the program (the text drawing, the fallback sandbox) is checked by other tests.
"""

from __future__ import annotations

import re
import shutil

import pytest

from grader.report import drawing as pictures
from grader.worker.sandbox import bwrap_status

PACKAGES = {"bwrap": "bubblewrap", "dot": "graphviz", "chromium": "chromium"}
"""Each optional program and the Debian package that installs it."""
REASON = re.compile(r"needs (\S+) \(Debian package (\S+)\)")


def reason(program: str, why: str) -> str:
    """The skip reason for a test that needs ``program``: REASON matches it."""
    return f"needs {program} (Debian package {PACKAGES[program]}): {why}"


BWRAP_OK, BWRAP_WHY = bwrap_status()  # not on PATH: the grader looks in fixed system folders
DOT = pictures.dot_program()
CHROMIUM = shutil.which("chromium")

needs_bwrap = pytest.mark.skipif(not BWRAP_OK, reason=reason("bwrap", BWRAP_WHY))
needs_dot = pytest.mark.skipif(DOT is None, reason=reason("dot", "Graphviz is not installed"))
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason=reason("chromium", "Chromium is not installed")
)
SANDBOX_MODES = [pytest.param("bwrap", marks=needs_bwrap), "none"]
"""A test of confinement runs with bubblewrap where it works, and always with the fallback."""
