"""Every spelling of an op a course documents is routed (issue 47): the babygrad book's Tensor
has ``a.matmul(b)`` beside ``a @ b``, each a method the student writes, and a routing test that
spells matmul as ``@`` alone let every mutant of the method survive the audit. A profile's
``spellings:`` names the further ones (``TensorApi.spellings``), a graph node says which one
builds it (``Node.form``), and each is routed by a test of its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader.audit.mutants import regions
from grader.language import profiles
from grader.language.graphs import Graph, Node, build_source, respelled
from grader.language.profiles import OPERATOR, SPELLED, ProfileError
from grader.language.tensor_api import BABYGRAD_API
from grader.layout import COURSES, DEFAULT_REFERENCE

DUNDERS = {
    "__add__": "{0} + ",
    "__radd__": " + {0}",
    "__sub__": "{0} - ",
    "__rsub__": " - {0}",
    "__mul__": "{0} * ",
    "__rmul__": " * {0}",
    "__truediv__": "{0} / ",
    "__rtruediv__": " / {0}",
    "__pow__": "{0} ** ",
    "__neg__": "-{0}",
    "__matmul__": "{0} @ ",
}
"""What a template of each operator method holds (``{0}`` the tensor itself)."""
REFERENCES = {
    "course": DEFAULT_REFERENCE,
    **{path.parent.name: path for path in sorted(COURSES.glob("*/reference"))},
}


def _routed_templates(course: str, assignment: profiles.AssignmentProfile) -> list[str]:
    """Every template a routing test of the course builds with (``operator.<op>`` and
    ``spelled.<k>.<op>``, as the suite's routing tests need them)."""
    api = assignment.api or BABYGRAD_API
    templates = [api.template(op) for op in assignment.ops if assignment.has(OPERATOR + op)]
    for op in assignment.ops:
        for form, template in enumerate(getattr(api, "spellings", {}).get(op, ()), start=1):
            if assignment.has(f"{SPELLED}{form}.{op}"):
                templates.append(template)
    return templates


def _profile(course: str) -> profiles.Profile:
    if course == "course":
        return profiles.course()
    return profiles.load(COURSES / course / "profile.yaml")


@pytest.mark.parametrize("course", sorted(REFERENCES))
def test_every_tensor_method_a_routing_item_grades_is_routed(course):
    """A method of ``Tensor`` whose region serves a routing item (``*.tensor_ops``) is built
    by some routing test: one that none spells has mutants no test can kill."""
    profile = _profile(course)
    for region in regions(REFERENCES[course]):
        owner, _, method = region.function.partition(".")
        routing = [item for item in region.serves if item.endswith(".tensor_ops")]
        if owner != "Tensor" or not routing:
            continue
        assignment = profile.of(routing[0].split(".")[0])
        spelled = DUNDERS.get(method, f"{{0}}.{method}(")
        assert any(spelled in t for t in _routed_templates(course, assignment)), (
            f"{course}: {region.file}'s Tensor.{method} serves {routing[0]}, and no routing "
            f"test spells it ({spelled!r}): give it in the profile's api: spellings:"
        )


def test_the_books_matmul_method_is_routed_beside_its_operator():
    book = _profile("babygrad-book").of("babygrad")
    assert book.has(f"{SPELLED}1.matmul_2d")
    assert not book.has(f"{SPELLED}2.matmul_2d")
    assert not _profile("course").of("babygrad").has(f"{SPELLED}1.matmul")


def test_a_respelled_node_is_built_and_sent_in_its_own_spelling():
    api = _profile("babygrad-book").of("babygrad").api
    leaves = (np.ones((2, 3)), np.ones((3, 2)))
    graph = Graph("tensor", leaves, (Node("matmul_2d", (0, 1)), Node("sum", (2,))))
    assert "c = a @ b" in build_source(graph, api)
    spelled = respelled(graph, "matmul_2d", 1)
    assert "c = a.matmul(b)" in build_source(spelled, api)
    assert Graph.from_json(spelled.to_json()).nodes == spelled.nodes
    assert "form" not in graph.to_json()["nodes"][0]  # the first spelling: JSON as before


@pytest.mark.parametrize(
    ("spellings", "message"),
    [
        ('{swap_axes: ["{0}.transpose({p})"]}', "swap_axes is not in the assignment's ops"),
        ('{matmul_2d: ["{0}.matmul({1}"]}', "api/spellings/matmul_2d: '{0}.matmul({1}' is not"),
    ],
)
def test_a_spelling_the_profile_cannot_route_is_refused_at_its_line(tmp_path, spellings, message):
    text = (COURSES / "babygrad-book" / "profile.yaml").read_text()
    text = text.replace(
        '      spellings: {matmul_2d: ["{0}.matmul({1})"]}', f"      spellings: {spellings}"
    )
    path = Path(tmp_path) / "profile.yaml"
    path.write_text(text)
    with pytest.raises(ProfileError, match="spellings") as caught:
        profiles.load(path)
    assert message in str(caught.value)
    assert f"{path}:" in str(caught.value)
