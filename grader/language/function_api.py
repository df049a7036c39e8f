"""How a scalar course whose ops are classes spells what the grader does with its engine.

MiniTorch's Module 1 is the model: a ``Scalar`` keeps, in its history, the function class that
made it, the context that function's forward filled in and its inputs; a function is applied
with ``Fn.apply(*scalars)`` and asked for its derivatives with ``Fn.backward(ctx, d_output)``;
the walk is two module functions, ``topological_sort(variable)`` (the output first) and
``backpropagate(variable, deriv)``, over anything that speaks the Variable protocol; only
leaves keep a derivative. One value serves both sides of the sandbox, like ``TensorApi``: the
worker builds, reads and calls with it, the snippets a student sees are written with it. The
defaults are MiniTorch's; a profile's ``api:`` block on a scalar assignment overrides any.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from grader.language.graphs import OPS
from grader.language.package import PackagedApi

MINITORCH_CLASSES = {
    "add": "Add",
    "mul": "Mul",
    "neg": "Neg",
    "inv": "Inv",
    "log": "Log",
    "exp": "Exp",
    "sigmoid": "Sigmoid",
    "relu": "ReLU",
    "lt": "LT",
    "eq": "EQ",
}
MINITORCH_VARIABLE = {
    "unique_id": "unique_id",
    "parents": "parents",
    "is_leaf": "is_leaf",
    "is_constant": "is_constant",
    "chain_rule": "chain_rule",
    "accumulate_derivative": "accumulate_derivative",
}


@dataclass(frozen=True)
class FunctionApi(PackagedApi):
    package: str = "minitorch"
    files: tuple[str, ...] = ("__init__.py", "autodiff.py", "scalar.py", "scalar_functions.py")
    scalar: str = "Scalar"
    """The scalar class, imported from the package."""
    leaf: str = "Scalar({data})"
    """A leaf, every argument the grader relies on spelled out."""
    derivative: str = "derivative"
    """Where a leaf keeps its derivative (None until it gets one: read as 0.0)."""
    function: str = "ScalarFunction"
    """The base class of every function, in the package."""
    forward: str = "forward"
    """A function's ``forward(ctx, *floats)``: its value from plain floats."""
    apply: str = "apply"
    """The class method that runs a function on scalars and records it in the result."""
    backward: str = "backward"
    """The function's own derivative: ``Fn.backward(ctx, d_output)``, a float for one input,
    a tuple otherwise."""
    context: str = "history.ctx"
    """The attribute path from a function's result to the context its forward filled in."""
    inputs: str = "history.inputs"
    """The attribute path from a function's result to the scalars it was applied to: real
    walks read it as well as ``parents``, so the grader's variables carry it too (a scalar
    whose first attribute on that path is None is a constant, as MiniTorch's history)."""
    topological_sort: str = "autodiff.topological_sort"
    """The walk's order, the output first: a module function of the package, looked up by
    that name when ``backpropagate`` runs (the grader swaps it out to grade the rest)."""
    backpropagate: str = "autodiff.backpropagate"
    """``backpropagate(variable, deriv)``: every leaf's derivative."""
    central_difference: str = "autodiff.central_difference"
    """``central_difference(f, *vals, arg=0, epsilon=...)``."""
    pair: str = ""
    """The course's holder of a variable and its derivative, called ``(variable, deriv)``,
    where the walk speaks in them (MiniTorch 2020's ``autodiff.VariableWithDeriv``): a chain
    rule answers a list of them and ``backpropagate`` is started with one. Empty: a chain
    rule answers ``(variable, deriv)`` tuples and ``backpropagate(variable, deriv)``."""
    variable: Mapping[str, str] = field(default_factory=lambda: dict(MINITORCH_VARIABLE))
    """The Variable protocol the walk speaks, in the course's names (the grader's stand-in
    variables implement it): ``unique_id`` and ``parents`` properties, ``is_leaf()``,
    ``is_constant()``, ``chain_rule(d)`` and ``accumulate_derivative(x)``."""
    classes: Mapping[str, str] = field(default_factory=lambda: dict(MINITORCH_CLASSES))
    """Op -> its function class in the package."""
    operators: Mapping[str, str] = field(default_factory=dict)
    """Op -> the expression that applies it (``{0}.log()``), where it differs from the op
    table's micrograd spelling."""

    def to_json(self) -> dict[str, Any]:
        return {"model": "function", **asdict(self)}

    @classmethod
    def from_json(cls, message: Mapping[str, Any]) -> FunctionApi:
        fields = {k: v for k, v in message.items() if k != "model"}
        for name in ("files", "aliases"):
            if name in fields:
                fields[name] = tuple(fields[name])
        return cls(**fields)

    @property
    def imports(self) -> str:
        """What a runnable snippet starts with."""
        return f"import {self.package}\nfrom {self.package} import {self.scalar}"

    def leaf_source(self, data: str, requires_grad: bool = True) -> str:
        return self.leaf.format(data=data)

    def make_leaf(self, scalar_class: Any, value: float) -> Any:
        """A leaf made exactly as ``leaf_source`` spells it."""
        source = self.leaf_source(repr(float(value)))
        return eval(source, {self.scalar: scalar_class})  # noqa: S307 - the profile's template

    def template(self, op: str, form: int = 0) -> str:
        """The expression that applies ``op`` with operators and methods (``{0}``, ``{p}``);
        a scalar API documents one spelling of each (``form`` 0)."""
        template = self.operators.get(op, OPS[op].micrograd) if not form else None
        if template is None:
            raise ValueError(f"op {op!r} has no scalar spelling")
        return template

    def paired(self, variable: str, deriv: str) -> str:
        """A variable and its derivative, as a chain rule answers them (the source of one)."""
        if self.pair:
            return f"{self.package}.{self.pair}({variable}, {deriv})"
        return f"({variable}, {deriv})"

    def walk_source(self, variable: str, deriv: str) -> str:
        """``backpropagate`` started from ``variable`` with ``deriv`` (the source of the call)."""
        start = self.paired(variable, deriv) if self.pair else f"{variable}, {deriv}"
        return f"{self.package}.{self.backpropagate}({start})"

    def class_source(self, op: str) -> str:
        """The function class of ``op``, as a snippet names it (``minitorch.Mul``)."""
        return f"{self.package}.{self.classes[op]}"
