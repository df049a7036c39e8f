"""The plugin refuses a grading run whose tests and rubric do not match, before grading."""

from __future__ import annotations

import pytest

from grader.grading import rubric as rubric_module
from grader.grading.options import GradeOptions, pytest_arguments
from grader.language import yamlfiles
from tests.helpers.grading import REFERENCE

pytest_plugins = ["pytester"]

RUBRIC = """
assignments:
  micrograd: {title: m, atol: 1.0e-6, rtol: 1.0e-6}
items:
  - {id: micrograd.topo, title: topo, points: 10, hint: h}
  - {id: micrograd.zero_grad, title: zero, points: 5, hint: h}
"""


@pytest.fixture(autouse=True)
def _no_plugin_autoload(monkeypatch: pytest.MonkeyPatch) -> None:
    """As the CLI starts a grading run: autoload off, the plugin loaded explicitly."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def run(pytester: pytest.Pytester, tests: str) -> pytest.RunResult:
    rubric = pytester.makefile(".yaml", rubric=RUBRIC)
    pytester.makepyfile(test_suite=tests)
    options = GradeOptions(
        submission=REFERENCE, rubric=rubric, assignment="micrograd", sandbox="none"
    )
    return pytester.runpytest_subprocess("-p", "grader.grading.plugin", *pytest_arguments(options))


def test_a_rubric_item_without_a_test_is_refused(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
from grader.grading.plugin import graded

@graded("micrograd.topo")
def test_topo(grading):
    pass
""",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*micrograd.zero_grad have no grading test*"])


def test_a_test_naming_no_item_is_refused(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
def test_unmarked():
    pass
""",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*names no rubric item*"])


def test_a_test_naming_an_unknown_item_is_refused(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
from grader.grading.plugin import graded

@graded("micrograd.nonsense")
def test_x(grading):
    pass
""",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*micrograd.nonsense*not in*"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("points: 10", "points: -1"),
        ("hint: h}", "hint: h, colour: red}"),
        ("micrograd: {title", "micrograd: {tytle"),
    ],
)
def test_schema_errors_name_line_and_field(tmp_path, change, message) -> None:
    path = tmp_path / "rubric.yaml"
    path.write_text(RUBRIC.replace(change, message, 1))
    with pytest.raises(rubric_module.RubricError) as error:
        rubric_module.load(path)
    text = str(error.value)
    assert text.startswith(f"{path}:") and "docs/course-authors.md" in text
    line = int(text.split(":")[1])
    assert message.split(":")[0].strip("{ ") in path.read_text().splitlines()[line - 1]


def test_unknown_dependency_is_refused_at_its_line(tmp_path) -> None:
    path = tmp_path / "rubric.yaml"
    path.write_text(RUBRIC.replace("hint: h}", "hint: h, depends_on: [micrograd.nope]}", 1))
    with pytest.raises(rubric_module.RubricError, match="unknown item 'micrograd.nope'") as error:
        rubric_module.load(path)
    line = int(str(error.value).split(":")[1])
    assert "micrograd.nope" in path.read_text().splitlines()[line - 1]


def test_invalid_yaml_is_refused_at_its_line(tmp_path) -> None:
    path = tmp_path / "rubric.yaml"
    lines = RUBRIC.splitlines()
    broken = next(n for n, text in enumerate(lines) if "hint: h}" in text)
    lines[broken] = lines[broken].replace("hint: h}", "hint: [h}")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(rubric_module.RubricError, match="not valid YAML") as error:
        rubric_module.load(path)
    assert int(str(error.value).split(":")[1]) in (broken + 1, broken + 2)


def test_a_rubric_read_again_is_not_parsed_again_and_a_changed_one_is(tmp_path, monkeypatch):
    """A process keeps the files it found valid (``yamlfiles``: a lane reads the rubric once,
    for all its forks): the same text again is not parsed, its data comes back as a fresh copy
    equal to the first, and a file whose text changed is read and judged anew."""
    path = tmp_path / "rubric.yaml"
    path.write_text(RUBRIC)
    first = rubric_module.load(path)
    parsed: list[str] = []
    real = yamlfiles.yaml.load
    monkeypatch.setattr(
        yamlfiles.yaml, "load", lambda text, **kw: parsed.append(text) or real(text, **kw)
    )
    again = rubric_module.load(path)
    assert parsed == [] and again == first and again.items is not first.items
    data, _ = yamlfiles.load_validated(path, rubric_module.SCHEMA, "", "", ValueError)
    data["items"].clear()  # a caller's copy is its own
    assert rubric_module.load(path) == first
    path.write_text(RUBRIC.replace("points: 10", "points: 11", 1))
    assert rubric_module.load(path) != first and len(parsed) == 1
    path.write_text(RUBRIC.replace("points: 10", "points: -1", 1))
    with pytest.raises(rubric_module.RubricError):
        rubric_module.load(path)
