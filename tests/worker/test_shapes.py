"""The one protocol every probe grades through (``grader.language.adapters.EngineProtocol``):
the three built-in shapes (``grader.worker.shapes``) and a course adapter implement it, and
answer each of its operations on a course's reference engine."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from grader.language import profiles
from grader.language.adapters import EngineProtocol, load_adapter
from grader.language.graphs import Graph, Node
from grader.layout import COURSES
from grader.worker.engines import isolated, load_engine, reinstate
from grader.worker.shapes import Adapted, Closures, Functions, Tensors, shape_of
from tests.helpers.planted import REFERENCE


@contextmanager
def micrograd() -> Iterator[Any]:
    yield load_engine(REFERENCE, "micrograd")


@contextmanager
def babygrad() -> Iterator[Any]:
    engine = load_engine(REFERENCE, "babygrad")
    reinstate(engine)
    yield engine


@contextmanager
def minitorch() -> Iterator[Any]:
    course = COURSES / "minitorch-module1"
    functions = profiles.load(course / "profile.yaml").assignment("scalar").functions
    engine = load_engine(
        course / "reference", "minitorch", functions.package, functions.folder, whole=True
    )
    engine.api = functions
    reinstate(engine)
    yield engine


@contextmanager
def tinytorch() -> Iterator[Any]:
    course = COURSES / "tinytorch-autograd"
    adapter = load_adapter((course / "adapter.py").read_text(), "tinytorch")
    with isolated(course / "reference", "tinytorch"):
        yield SimpleNamespace(adapter=adapter, engine=adapter.load())


ENGINES = {
    "micrograd": (micrograd, "scalar", Closures),
    "babygrad": (babygrad, "tensor", Tensors),
    "minitorch": (minitorch, "scalar", Functions),
    "tinytorch": (tinytorch, "tensor", Adapted),
}


def _data(kind: str, value: float) -> Any:
    return value if kind == "scalar" else np.array([value])


@pytest.mark.parametrize("name", ENGINES)
def test_every_shape_is_the_protocol(name):
    loaded, kind, implementation = ENGINES[name]
    with loaded() as engine:
        shape = shape_of(engine, kind)
        assert isinstance(shape, implementation)
        assert isinstance(shape, EngineProtocol)


@pytest.mark.parametrize("name", ENGINES)
def test_one_op_alone_answers_its_gradients(name):
    loaded, kind, _ = ENGINES[name]
    with loaded() as engine:
        shape = shape_of(engine, kind)
        leaves = [shape.leaf(_data(kind, 2.0)), shape.leaf(_data(kind, 3.0))]
        out = shape.apply(Node("mul", (0, 1)), leaves)
        assert np.allclose(shape.value(out), 6.0)
        upstream, _ = shape.out_grad(out, np.asarray(_data(kind, 1.0), np.float64))
        grads = shape.gradients(out, upstream)
        assert [float(np.sum(g)) for g in grads] == [3.0, 2.0]


@pytest.mark.parametrize("name", ENGINES)
def test_a_whole_graph_is_built_and_walked(name):
    loaded, kind, _ = ENGINES[name]
    leaves = (_data(kind, 2.0), _data(kind, 3.0))
    graph = Graph(kind, leaves, (Node("mul", (0, 1)), Node("add", (2, 0))))
    with loaded() as engine:
        shape = shape_of(engine, kind)
        nodes = shape.build(graph)
        shape.walk(nodes[-1])
        assert np.allclose(shape.value(nodes[-1]), 8.0)
        assert [float(np.sum(shape.grad(n))) for n in nodes[:2]] == [4.0, 2.0]


@pytest.mark.parametrize("name", ["micrograd", "babygrad", "minitorch"])
def test_the_graders_stand_in_op_is_in_the_courses_object_model(name):
    loaded, kind, _ = ENGINES[name]
    with loaded() as engine:
        shape = shape_of(engine, kind)
        leaves = [shape.leaf(_data(kind, 1.0)), shape.leaf(_data(kind, 1.0))]
        told: list[Any] = []
        out = shape.stand_in([2.0, 3.0], leaves, told.append)
        # micrograd's stand-in holds 0.0: the walk items never read a stand-in's value
        assert np.allclose(shape.value(out), 0.0 if name == "micrograd" else 5.0)
        shape.walk(out)
        assert [float(np.sum(shape.grad(n))) for n in leaves] == [2.0, 3.0]
        assert len(told) == 1


PROTOCOL_PAGE = COURSES.parent / "docs" / "protocol.md"

MYGRAD = """
import numpy as np


class Var:
    def __init__(self, data, requires_grad=False, vjp=None):
        self.data = np.asarray(data, dtype=np.float64)
        self.requires_grad = requires_grad
        self._vjp = vjp

    def vjp(self, g):
        return self._vjp(np.asarray(g))


class ops:
    @staticmethod
    def add(a, b):
        return Var(a.data + b.data, vjp=lambda g: (g, g))

    @staticmethod
    def mul(a, b):
        return Var(a.data * b.data, vjp=lambda g: (g * b.data, g * a.data))
"""
"""The worked example's course, made up: just enough of ``mygrad`` for two ops."""


def test_the_docs_worked_adapter_runs_through_the_protocol(tmp_path):
    text = PROTOCOL_PAGE.read_text()
    example = text[text.index("**A worked example.**") :]
    source = example[example.index("```python\n") + len("```python\n") : example.index("```\n\n")]
    (tmp_path / "mygrad.py").write_text(MYGRAD)
    with isolated(tmp_path, "mygrad"):
        adapter = load_adapter(source, "mygrad")
        shape = shape_of(SimpleNamespace(adapter=adapter, engine=adapter.load()), "tensor")
        assert isinstance(shape, EngineProtocol)
        graph = Graph("tensor", (np.array([2.0]), np.array([3.0])), (Node("mul", (0, 1)),))
        nodes = shape.build(graph)
        nodes.append(shape.apply(Node("add", (2, 0)), nodes))
        shape.walk(nodes[-1])
        assert [float(shape.grad(n)[0]) for n in nodes[:2]] == [4.0, 2.0]
