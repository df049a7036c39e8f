"""The documentation site (``mkdocs.yml``, ``docs/``) builds with warnings as errors, as
``make docs`` builds it; every command its pages show works as written (run as
``tests/helpers/shown_commands.py`` says, but those the README shows, which
``tests/project/test_readme.py`` runs); the rubric items page names every item of every grading
suite; and each page an error message sends a reader to has the section it names."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader.language import adapters
from tests.helpers import programs
from tests.helpers.shown_commands import (
    ENVIRONMENT,
    PAGES,
    PRODUCES,
    README,
    cases,
    commands_of,
    placeholders_made_real,
    run_as_shown,
    shown_commands,
)

# `from tests.helpers import programs`: .ci/run's second pass (without bwrap, dot and chromium)
# selects the test files that import names from that module, and these tests need none of the
# three.
REPO = README.parent
DOCS = REPO / "docs"
COMMANDS = commands_of(PAGES, shown_elsewhere=shown_commands(README.read_text()))
SUITE_MODULES = ("test_micrograd", "test_scalar_functions", "test_babygrad")


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return placeholders_made_real(tmp_path_factory)


@programs.needs_mkdocs
def test_the_site_builds_with_warnings_as_errors(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for page in PAGES:
        assert (tmp_path / f"{page.stem}.html").is_file(), page


def test_every_page_is_in_the_navigation():
    navigation = (REPO / "mkdocs.yml").read_text()
    assert {page.name for page in PAGES} == set(re.findall(r"[\w-]+\.md", navigation))


def test_the_readme_links_to_pages_that_exist():
    links = re.findall(r"\]\((docs/[^)#]+)", README.read_text())
    assert "docs/report.png" in links
    for link in links:
        assert (REPO / link).is_file(), link
    assert {page.relative_to(REPO).as_posix() for page in PAGES if page.stem != "index"} <= set(
        links
    )


def test_the_pages_show_the_commands_the_runs_fill_in():
    shown = set(commands_of([README, *PAGES]))
    for command in shown:  # with ARGS of its own, make would run these tests again
        assert not re.match(r"make (test|check) .*ARGS", command), command
    assert set(ENVIRONMENT) | set(PRODUCES) <= shown


def suite_items() -> dict[str, set[str]]:
    """Every item each grading suite grades, without its assignment's prefix."""
    items: dict[str, set[str]] = {}
    for name in SUITE_MODULES:
        module = importlib.import_module(f"grader.grading.suites.{name}")
        for test in vars(module).values():
            for mark in getattr(test, "pytestmark", []):
                if mark.name == "rubric":
                    items.setdefault(name, set()).add(mark.args[0].split(".", 1)[1])
    return items


def test_the_items_page_names_every_item_of_every_suite():
    sections = re.split(r"^## ", (DOCS / "items.md").read_text(), flags=re.MULTILINE)
    for suite, items in suite_items().items():
        (section,) = [s for s in sections if f"suites/{suite}.py" in s]
        named = set(re.findall(r"^\| `([\w.]+)` \|", section, flags=re.MULTILINE))
        assert named == items, suite


def test_the_adapter_sketch_defines_the_protocol():
    """The sketch defines the five functions; the worked walk hooks are 11-785's, verbatim."""
    page = (DOCS / "protocol.md").read_text()
    sketch, hooks = re.findall(r"^```python\n(.*?)^```", page, flags=re.MULTILINE | re.DOTALL)
    assert adapters.missing(sketch) == []
    assert adapters.walk_hooks(hooks) == list(adapters.WALK_HOOKS)
    assert hooks in (REPO / "courses" / "cmu-11785-autograd" / "adapter.py").read_text()


def test_each_section_an_error_message_names_is_on_its_page():
    sent = set()
    for source in (REPO / "grader").rglob("*.py"):
        text = " ".join(source.read_text().split())
        sent |= set(re.findall(r"See '([^']+)' in (docs/[\w-]+\.md)", text))
    assert sent
    for section, page in sent:
        headings = re.findall(r"^#+ (.+)$", (REPO / page).read_text(), flags=re.MULTILINE)
        assert section in headings, (section, page)


@pytest.mark.slow
@pytest.mark.parametrize("command", cases(COMMANDS))
def test_command(root, command):
    run_as_shown(root, command)
