"""The counterexample pictures of the classic bugs: every node and edge drawn, wrong ones marked.

The figures come from real grading runs of the reference with one bug planted, so these tests
also hold the figure data to what a student will see.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter

import numpy as np
import pytest

from grader.language.figures import Figure
from grader.language.verdicts import Tolerance, mismatch, show
from grader.report import drawing as pictures
from tests.helpers.grading import grade_items, planted
from tests.helpers.programs import needs_dot

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("pictures")]  # figures graded once
SVG = "{http://www.w3.org/2000/svg}"
CLASSIC = {
    "overwrite-grad": (
        "micrograd.accumulate",
        {
            "micrograd/engine.py": [
                ("self.grad += out.grad\n", "self.grad = out.grad\n"),
                ("other.grad += out.grad", "other.grad = out.grad"),
            ]
        },
    ),
    "tanh-derivative": (
        "micrograd.ops.tanh",
        {"micrograd/engine.py": [("1.0 - t * t", "1.0 - t")]},
    ),
    "transpose-same-axes": (
        "babygrad.ops.transpose",
        {
            "babygrad/ops.py": [
                (
                    "np.transpose(out_grad.data, np.argsort(self.axes))",
                    "np.transpose(out_grad.data, self.axes)",
                )
            ]
        },
    ),
}
# A grader-made graph (``dag_figure``): edges carry their local gradient as a label.
LABELLED: Figure = {
    "nodes": [
        {"id": "n0", "op": "leaf", "value": None, "expected": "3", "got": "1", "wrong": True},
        {"id": "n1", "op": "given", "value": None, "expected": "1", "got": "1", "wrong": False},
    ],
    "edges": [{"from": "n0", "to": "n1", "label": "x1"}, {"from": "n0", "to": "n1", "label": "x2"}],
}


@pytest.fixture(scope="session")  # once per run: see tests/conftest.py
def figures(tmp_path_factory) -> dict[str, Figure]:
    """The figure of the item each classic bug fails, from a real grading run."""
    found = {}
    for bug, (item, replacements) in CLASSIC.items():
        submission = planted(tmp_path_factory.mktemp(bug), replacements)
        result = grade_items(submission, assignment=item.split(".")[0], only=[item])[item]
        assert result["status"] in ("failed", "partial") and result["figure"], result["feedback"]
        found[bug] = result["figure"]
    return found


def _svg_parts(svg: str) -> tuple[dict[str, str], Counter, dict[str, set[str]]]:
    """Node ids -> their drawn text, edge titles counted, node ids -> fill colours."""
    root = ET.fromstring(svg)
    texts, fills, edges = {}, {}, Counter()
    for group in root.iter(f"{SVG}g"):
        title = group.findtext(f"{SVG}title")
        if group.get("class") == "node":
            texts[title] = " ".join(t.text or "" for t in group.iter(f"{SVG}text"))
            fills[title] = {p.get("fill") for p in group.iter(f"{SVG}polygon")}
        elif group.get("class") == "edge":
            edges[title] += 1
    return texts, edges, fills


def _svg(figure: Figure) -> str:
    picture = pictures.draw(figure, "test")
    assert picture.svg is not None
    return picture.svg


def _check_svg(figure: Figure) -> None:
    texts, edges, fills = _svg_parts(_svg(figure))
    assert set(texts) == {node["id"] for node in figure["nodes"]}
    assert edges == Counter(f"{e['from']}->{e['to']}" for e in figure["edges"])
    for node in figure["nodes"]:
        drawn = texts[node["id"]]
        assert node["op"] in drawn
        for key in ("value", "expected", "got"):
            for line in (node[key] or "").split():
                assert line in drawn, (node["id"], key, line)
        marked = pictures.MARK in drawn and "WRONG" in drawn
        assert marked == node["wrong"], drawn
        assert (pictures.WRONG_FILL in fills[node["id"]]) == node["wrong"]


def _check_text(figure: Figure) -> None:
    lines = pictures.text_lines(figure)
    text = "\n".join(line for line, _ in lines)
    operands: dict[str, list[str]] = {}
    for edge in figure["edges"]:
        label = f" ({edge['label']})" if edge.get("label") else ""
        operands.setdefault(edge["to"], []).append(edge["from"] + label)
    for node in figure["nodes"]:
        head = (
            f"{node['id']} = {node['op']}({', '.join(operands[node['id']])})"
            if node["id"] in operands
            else f"{node['id']}  {node['op']}"
        )
        ((line, wrong),) = [(ln, w) for ln, w in lines if head in ln]
        assert wrong == node["wrong"] == (pictures.MARK in line and "WRONG" in line), line
        for key in ("value", "expected", "got"):
            for part in (node[key] or "").split():
                assert part in text


@needs_dot
@pytest.mark.parametrize("bug", CLASSIC)
def test_svg_draws_every_node_and_edge_and_marks_the_wrong_ones(figures, bug):
    _check_svg(figures[bug])


@pytest.mark.parametrize("bug", CLASSIC)
def test_text_drawing_shows_every_node_and_edge_and_marks_the_wrong_ones(figures, bug):
    _check_text(figures[bug])


@needs_dot
def test_a_plus_a_is_one_node_with_two_edges(figures):
    texts, edges, _ = _svg_parts(_svg(figures["overwrite-grad"]))
    assert edges == Counter({"a->b": 2})
    assert pictures.MARK in texts["a"] and pictures.MARK not in texts["b"]


def test_a_plus_a_is_one_line_naming_a_twice(figures):
    assert "  b = add(a, a)" in pictures.draw(figures["overwrite-grad"]).text


@needs_dot
def test_tanh_picture_shows_expected_and_got_on_the_wrong_leaf(figures):
    texts, _, _ = _svg_parts(_svg(figures["tanh-derivative"]))
    assert "0.419974" in texts["a"] and "0.238406" in texts["a"]
    assert "tanh" in texts["b"]


def test_transpose_picture_shows_the_array_gradient_of_the_wrong_shape(figures):
    figure = figures["transpose-same-axes"]
    (wrong,) = [n for n in figure["nodes"] if n["wrong"]]
    assert wrong["id"] == "a"
    text = pictures.draw(figure).text
    assert "grad expected  shape (1, 1, 2) [[[1., 1.]]]" in text
    assert "grad yours     shape (2, 1, 1)\n" in text and "b = transpose(a)" in text


def test_an_array_shows_its_shape_beside_its_values():
    tol = Tolerance(atol=1e-6, rtol=1e-6)
    batched = np.arange(2.0).reshape(2, 1, 1, 1)
    assert show(np.float64(0.5)) == "0.5"
    assert show(np.array([0.5, 1.5])) == "shape (2,) [0.5, 1.5]"
    assert show(batched) == "shape (2, 1, 1, 1)\n[[[[0.]]],\n [[[1.]]]]"  # no blank lines
    assert mismatch("x.grad", np.array([1.0, 2.0]), np.array([1.0, 3.0]), tol) == (
        "x.grad: expected shape (2,) [1., 3.], got shape (2,) [1., 2.]"
    )
    assert mismatch("a.grad", batched + 1, batched, tol) == (
        "a.grad:\nexpected shape (2, 1, 1, 1)\n[[[[0.]]],\n [[[1.]]]]\n"
        "got shape (2, 1, 1, 1)\n[[[[1.]]],\n [[[2.]]]]"
    )


@needs_dot
def test_edge_labels_are_drawn_in_the_svg():
    svg = _svg(LABELLED)
    assert ">x1<" in svg and ">x2<" in svg
    _check_svg(LABELLED)


def test_edge_labels_are_drawn_in_the_text():
    _check_text(LABELLED)


def test_without_graphviz_the_picture_is_the_text_drawing(figures, monkeypatch):
    monkeypatch.setattr(pictures, "dot_program", lambda: None)
    picture = pictures.draw(figures["tanh-derivative"])
    assert picture.svg is None
    assert "a  leaf   ✗ WRONG" in picture.text


def test_a_broken_graphviz_costs_only_the_svg(figures, monkeypatch, tmp_path):
    broken = tmp_path / "dot"
    broken.write_text("#!/bin/sh\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setattr(pictures, "dot_program", lambda: str(broken))
    picture = pictures.draw(figures["tanh-derivative"])
    assert picture.svg is None and picture.lines


@needs_dot
def test_svg_ids_carry_the_prefix_so_several_pictures_fit_one_page(figures):
    svg = pictures.draw(figures["tanh-derivative"], "item-x").svg
    assert svg is not None
    ids = [el.get("id") for el in ET.fromstring(svg).iter() if el.get("id")]
    assert ids and all(i.startswith("item-x") for i in ids)
