"""A course whose API fits no built-in spelling: what its profile may say (an op module, dotted
attributes, nested files, no top ``__init__``, a walk the course gives, array gradients) and
the adapter it ships (``grader.language.adapters``), checked before any student runs it. The
grades of TinyTorch's autograd module through its adapter are in ``tests/flows/test_courses.py``."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from grader.language import profiles
from grader.language.assignments import tensor_assignment
from grader.language.graphs import Graph, Node, expression, without_param
from grader.language.profiles import ProfileError
from grader.language.snippets import graph_snippet
from grader.language.tensor_api import TensorApi
from grader.layout import COURSES

TINYTORCH = COURSES / "tinytorch-autograd"


@pytest.mark.parametrize(
    ("template", "default"),
    [
        ("ops.summation({0}, axes={p})", "ops.summation({0})"),
        ("ops.summation(axes={p}, a={0})", "ops.summation(a={0})"),
        ("{0}.transpose(*{p})", "{0}.transpose()"),
        ("{0}.sum({p})", "{0}.sum()"),
    ],
)
def test_a_default_parameter_leaves_its_argument_out(template, default):
    assert without_param(template) == default
    graph = Graph("tensor", ((1.0,),), (Node("sum", (0,), None),))
    api = TensorApi(operators={"sum": template})
    compile(expression(graph, 1, api, ["x", "y"]), "<snippet>", "eval")


def _tinytorch_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "course"
    shutil.copytree(TINYTORCH, folder, ignore=shutil.ignore_patterns("reference"))
    return folder / "profile.yaml"


def _line(text: str, key: str) -> int:
    return text[: text.index(key)].count("\n") + 1


def test_an_operator_that_is_not_python_is_the_profiles_error_with_its_line(tmp_path):
    profile = _tinytorch_copy(tmp_path)
    text = profile.read_text().replace('"{0}.matmul({1})"', '"{0}.matmul({1}"')
    profile.write_text(text)
    with pytest.raises(ProfileError, match=rf"profile.yaml:{_line(text, 'matmul: ')}: .*matmul"):
        profiles.load(profile)


def test_an_adapter_is_checked_for_the_protocol_without_running_it(tmp_path):
    profile = _tinytorch_copy(tmp_path)
    adapter = profile.parent / "adapter.py"
    line = _line(profile.read_text(), "adapter: ")
    adapter.write_text(
        adapter.read_text().replace("def gradients(", "def grads(")
        + "\nraise SystemExit('never run in the parent')\n"
    )
    with pytest.raises(ProfileError, match=rf"profile.yaml:{line}: .*does not define gradients"):
        profiles.load(profile)
    adapter.write_text("def load(:\n")
    with pytest.raises(ProfileError, match=rf"profile.yaml:{line}: .*adapter.py:1"):
        profiles.load(profile)
    adapter.unlink()
    with pytest.raises(ProfileError, match=rf"profile.yaml:{line}: .*no adapter.py"):
        profiles.load(profile)


def test_tinytorchs_layout_dotted_inputs_and_array_gradients():
    own = profiles.load(TINYTORCH / "profile.yaml").of("tinytorch")
    api = own.api
    assert isinstance(api, TensorApi)
    assert api.engine_file == "tinytorch/core/tensor.py"  # no top __init__.py
    assert api.layout == ("tinytorch/core/tensor.py", "tinytorch/core/autograd.py")
    assert "def gradients(" in api.adapter_source
    node = SimpleNamespace(_grad_fn=SimpleNamespace(saved_tensors=("a", "b")))
    assert api.inputs_of(node) == ("a", "b")
    api.set_inputs(node, ("c",))
    assert node._grad_fn.saved_tensors == ("c",)
    graph = Graph("tensor", ((1.0,),), (Node("sum", (0,), None),))
    snippet = graph_snippet(graph, tensor_assignment("tinytorch", api))
    assert snippet.splitlines()[-1] == "print(a.grad)"  # its numbers, not <memory at 0x...>


def test_a_walk_the_course_gives_is_never_graded():
    profile = profiles.load(TINYTORCH / "profile.yaml")
    assert profile.item_id("babygrad.backward") is None
    assert profile.item_id("babygrad.accumulate") is None
    assert profile.item_id("babygrad.ops.add") == "tinytorch.add_backward"
    assert not profile.of("tinytorch").has("operator.add")


def test_a_changed_adapter_changes_the_rubrics_digest(tmp_path):
    profile = _tinytorch_copy(tmp_path)
    before = profiles.load(profile).text
    adapter = profile.parent / "adapter.py"
    adapter.write_text(adapter.read_text() + "\n# changed\n")
    assert profiles.load(profile).text != before
