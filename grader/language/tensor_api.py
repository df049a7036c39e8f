"""How a tensor course's API spells what the grader does with an engine: import it, make a leaf,
read a value, apply one op and ask its own backward, subclass its op base class, and reach a
node's op and inputs.

One value serves both sides of the sandbox: the worker builds and reads with it (sent as plain
JSON in the import request), and the trusted parent writes the snippets a student sees with the
same words, so that a snippet runs in the student's own API. The defaults are this course's
babygrad; a profile's ``api:`` block overrides any of them (``courses/needle-hw1/profile.yaml``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from types import CodeType
from typing import Any

from grader.language.graphs import OPS, Node
from grader.language.package import PackagedApi, resolve


@dataclass(frozen=True)
class TensorApi(PackagedApi):
    """A tensor course's spelling; its package is imported as ``from <package>.<tensor_module>
    import Tensor`` and ``<package>.<ops_module>``. Attribute names may be dotted paths
    (``_grad_fn.saved_tensors``)."""

    ops_module: str = "ops"
    """The module of the package that holds the op classes (``core.autograd``)."""
    tensor_module: str = ""
    """The module of the package that holds ``Tensor`` (empty: the package itself)."""

    leaf: str = "Tensor({data}, requires_grad={requires_grad})"
    """A leaf with every argument the grader relies on spelled out, never a default."""
    value: str = "data"
    """The attribute of a tensor that holds its array, or a method that returns it
    (``numpy()``); a gradient without it is taken as the array itself."""
    function: str = "Function"
    """The base class of every op, in ``<package>.ops``."""
    forward: str = "forward"
    """The method of an op that computes its output array from its operands' arrays."""
    backward: str = "backward"
    """The method of an op that returns its operands' gradients: ``(out_grad, node)``."""
    node_op: str = "_op"
    """The attribute of a tensor that holds the op that made it (None for a leaf)."""
    node_inputs: str = "_inputs"
    """The attribute of a tensor that holds its operands."""
    grad: str = "tensor"
    """What ``.grad`` holds: a ``tensor`` read like a value, or a bare numpy ``array``
    (TinyTorch), printed as it is."""
    adapter: str = ""
    """A course adapter (``grader.language.adapters``): the file in the course's folder that
    implements the grader's protocol where this spelling cannot; the worker runs it."""
    adapter_source: str = ""
    """The adapter's text, read when the profile is loaded and sent to the worker with the
    rest of the spelling."""
    snippets: Mapping[str, Any] = field(default_factory=dict)
    """How an adapter's course spells the snippets a student reads
    (``grader.language.tape_snippets``; empty: the adapter's course has none of its own). The
    worker hands them to the adapter (``adapters.load_adapter``), which reads the student's
    engine as they spell it (11-785's gradient buffer)."""
    classes: Mapping[str, str] = field(default_factory=dict)
    """Op -> the op's class in ``<package>.ops``, where it differs from babygrad's name."""
    operators: Mapping[str, str] = field(default_factory=dict)
    """Op -> the expression that applies it (``ops.log({0})``), where it differs from the op
    table's operator or method."""
    spellings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Op -> the further expressions the course documents for it, beside ``template``'s
    (``{0}.matmul({1})`` beside ``{0} @ {1}``): each is the student's to route, so each is
    routed by a test of its own (``Node.form``: 1 is the first of them)."""
    broadcasts: bool = True
    """Elementwise ops broadcast their operands implicitly, as numpy does (needle's do not:
    only an explicit ``broadcast_to`` does)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, message: Mapping[str, Any]) -> TensorApi:
        tuples: dict[str, Any] = {
            name: tuple(message[name]) for name in ("files", "aliases") if name in message
        }
        if "spellings" in message:
            tuples["spellings"] = {op: tuple(s) for op, s in message["spellings"].items()}
        return cls(**{**message, **tuples})

    @property
    def ops_path(self) -> str:
        """The module holding the op classes, as imported."""
        return f"{self.package}.{self.ops_module}"

    @property
    def tensor_path(self) -> str:
        """The module holding ``Tensor``, as imported."""
        return ".".join(p for p in (self.package, self.tensor_module) if p)

    @property
    def imports(self) -> str:
        """What a runnable snippet starts with."""
        ops = (
            f"from {self.package} import ops"
            if self.ops_module == "ops"
            else f"import {self.ops_path} as ops"
        )
        return f"from {self.tensor_path} import Tensor\n{ops}"

    def leaf_source(self, data: str, requires_grad: bool) -> str:
        return self.leaf.format(data=data, requires_grad=requires_grad)

    def value_source(self, expression: str) -> str:
        """A tensor's numbers as a snippet reads them: the snippets' ``value`` where they
        spell one (11-785's tensors are bare arrays, whose ``.data`` is a ``<memory at
        0x...>``)."""
        spelled = self.snippets.get("value")
        return spelled.format(tensor=expression) if spelled else f"{expression}.{self.value}"

    def grad_source(self, expression: str) -> str:
        """A gradient's numbers: a bare array prints them itself (its own ``.data`` is a
        ``<memory at 0x...>``)."""
        return expression if self.grad == "array" else self.value_source(expression)

    def read(self, tensor: Any, array_or_tensor: bool = False) -> Any:
        """The array a tensor holds; with ``array_or_tensor`` (a gradient, which an engine
        may keep as the array itself), a value without the attribute is the array."""
        name = self.value.removesuffix("()")
        if array_or_tensor and (self.grad == "array" or not hasattr(tensor, name.split(".")[0])):
            return tensor
        value = resolve(tensor, name)
        return value() if self.value.endswith("()") else value

    def op_of(self, node: Any) -> Any:
        """The op that made ``node`` (``node_op``, dotted)."""
        return resolve(node, self.node_op)

    def inputs_of(self, node: Any) -> Any:
        """``node``'s operands (``node_inputs``, dotted)."""
        return resolve(node, self.node_inputs)

    def set_inputs(self, node: Any, inputs: Any) -> None:
        *path, last = self.node_inputs.split(".")
        setattr(resolve(node, ".".join(path)) if path else node, last, inputs)

    def make_leaf(self, tensor_class: Any, data: Any, requires_grad: bool) -> Any:
        """A leaf made exactly as ``leaf_source`` spells it."""
        source = _compiled(self.leaf_source("data", requires_grad))
        return eval(source, {"Tensor": tensor_class, "data": data})  # noqa: S307

    def class_name(self, op: str) -> str:
        function = OPS[op].function
        if op in self.classes:
            return self.classes[op]
        if function is None:
            raise ValueError(f"op {op!r} has no op class")
        return function.name

    def function_source(self, node: Node) -> str:
        """The op class that applies ``node``'s op, e.g. ``ops.Transpose((1, 0))``, built as
        the course's own functions build it: its parameter passed, None too
        (``transpose(a, axes=None)`` is ``Transpose(axes)(a)``), so a class whose parameter
        has no default is not charged for a call the course never makes."""
        name = self.class_name(node.op)
        return f"ops.{name}({node.param!r})" if OPS[node.op].takes_param else f"ops.{name}()"

    def operator(self, op: str) -> bool:
        """Is ``op`` applied with one of Tensor's operators or methods, rather than by calling
        its op class or function in ``ops`` (``operators``: ``ops.Log()({0})``)?"""
        return not self.template(op).startswith("ops.")

    def template(self, op: str, form: int = 0) -> str:
        """The expression that applies ``op`` with operators and methods (``{0}``, ``{p}``);
        ``form`` k > 0: the k-th of its further ``spellings``."""
        if form:
            return self.spellings[op][form - 1]
        template = self.operators.get(op, OPS[op].tensor)
        if template is None:
            raise ValueError(f"op {op!r} has no tensor spelling")
        return template


@functools.cache
def _compiled(source: str) -> CodeType:
    return compile(source, "<api>", "eval")


BABYGRAD_API = TensorApi()
"""This course's babygrad."""
