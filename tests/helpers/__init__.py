"""What the project's tests share: fake workers, planted bugs, grading a copy, optional
programs, throwaway venvs, the documentation's shown commands, a batch killed partway, the
processes a test started, and the paths below. Test modules import these, never one another
(``tests/project/test_tests_layout.py``)."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The checkout these tests belong to."""
TESTS = REPO_ROOT / "tests"
ENGINES = TESTS / "engines"
"""Engines of our own per course: correct ones written differently, and planted bugs."""
FIXTURES = TESTS / "fixtures"
SANDBOX_FIXTURES = TESTS / "sandbox_fixtures"
"""The misbehaving worker (``chaos.py``) the sandbox's tests drive."""
