"""The grader's own parts that stand in for the student's around the part a walk probe
grades: graphs whose ``_backward`` closures or ``Function``s are the grader's (known local
gradients, counted calls), and node inputs that count how often a walk reads them. They do
none of the student's work: a closure adds a given weight, an op sums with given weights.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np

from grader.language.adapters import EngineProtocol
from grader.language.function_api import FunctionApi
from grader.language.package import resolve
from grader.worker.probes.build import api_of


def given_scalar(shape: EngineProtocol, dag: dict[str, Any]) -> tuple[list[Any], list[int]]:
    """A micrograd graph whose ``_backward`` closures are the grader's (``shape.stand_in``):
    each adds a known weight times ``out.grad`` into its operands and counts its calls."""
    nodes = [shape.leaf(1.0 + i) for i in range(dag["leaves"])]
    calls = [0] * (dag["leaves"] + len(dag["nodes"]))

    def counted(index: int) -> Callable[[Any], None]:
        def on_backward(_: Any) -> None:
            calls[index] += 1

        return on_backward

    for pairs in dag["nodes"]:
        operands = [nodes[i] for i, _ in pairs]
        weights = [float(w) for _, w in pairs]
        nodes.append(shape.stand_in(weights, operands, counted(len(nodes))))
    return nodes, calls


class CountedInputs(tuple):
    """A node's ``_inputs`` that count each time a walk reads them (iterates, measures or
    indexes them): a walk that goes into a shared tensor again from every path to it reads
    that tensor's inputs once per path, a correct walk a few times at most."""

    reads: list[int]
    index: int

    def _read(self) -> None:
        self.reads[self.index] += 1

    def __iter__(self) -> Iterator[Any]:
        self._read()
        return super().__iter__()

    def __len__(self) -> int:
        self._read()
        return super().__len__()

    def __getitem__(self, key: Any) -> Any:
        self._read()
        return super().__getitem__(key)


SAMPLED_OPS = ("neg", "exp", "log", "relu")
"""One-input ops of the course whose own backward shows the form the student's ops answer in."""


def own_singles_are_tuples(engine: ModuleType) -> bool:
    """Do the student's own one-input ops return their one gradient as a 1-tuple? The course
    allows a bare Tensor or a tuple (needle's starter returns both), and a walk need only
    take what its own ops give. Yes only if every sampled op that answers gives a tuple (or
    list); no if any gives anything else, or none answers."""
    api = api_of(engine)
    forms = []
    for op in SAMPLED_OPS:
        try:
            function = getattr(engine.ops, api.class_name(op))()
            node = function(api.make_leaf(engine.Tensor, np.full((2,), 2.0), True))
            ones = api.make_leaf(engine.Tensor, np.ones((2,)), False)
            forms.append(isinstance(getattr(function, api.backward)(ones, node), tuple | list))
        except Exception:  # noqa: BLE001, S112 - an op that does not answer shows no form
            continue
    return bool(forms) and all(forms)


NOT_THE_OUTPUT = "backward was called with a tensor that is not this op's output"
"""The grader's ops need ``backward(out_grad, node)``'s ``node`` to be their own output, as
the course's ops do (they read its inputs and its value)."""


def given_sum(
    engine: ModuleType,
    on_backward: Callable[[Any], None],
    single_as_tuple: bool = False,
    hands_back: bool = False,
) -> type:
    """The grader's own weighted-sum op class, ``GivenSum(weights, index, as_tuple)``, a
    subclass of the course's op base class: its forward sums its inputs with given weights, its
    backward (``on_backward`` is told the op first) returns each input's weight times
    ``out_grad``, a bare Tensor for one input (a 1-tuple with ``single_as_tuple``, or where the
    op was made ``as_tuple``), and checks that it is given
    its own output (``NOT_THE_OUTPUT``). With ``hands_back``, every input of weight 1 gets one
    and the same tensor holding ``out_grad``'s own array (where the course's tensors keep it
    in an attribute), as a real Add hands ``out_grad`` back unchanged: a ledger must not sum in
    place into what an op gave it. The gradients it hands back add up with the grader's own
    ``+``."""
    api = api_of(engine)

    def added(self: Any, other: Any) -> Any:
        total = np.asarray(api.read(self), np.float64) + np.asarray(
            api.read(other, array_or_tensor=True), np.float64
        )
        return api.make_leaf(Adjoint, total, False)

    # The gradients the grader's ops hand back add up with the grader's own +, whichever side
    # they are on (a subclass's reflected method goes first), never through the course's add
    # op: needle's ledger sums its lists with +, and the ledger is graded apart from the ops.
    Adjoint = type("Adjoint", (engine.Tensor,), {"__add__": added, "__radd__": added})  # noqa: N806

    def __init__(
        self: Any, weights: list[float], index: int | None = None, as_tuple: bool = False
    ) -> None:
        self.weights = weights
        self.index = index
        self.as_tuple = as_tuple

    def forward(self: Any, *arrays: np.ndarray) -> np.ndarray:
        return sum(w * np.asarray(a, np.float64) for w, a in zip(self.weights, arrays, strict=True))

    def backward(self: Any, out_grad: Any, node: Any) -> Any:
        if api.op_of(node) is not self:
            raise ValueError(NOT_THE_OUTPUT)
        on_backward(self)
        given = api.read(out_grad, array_or_tensor=True)
        grad = np.asarray(given, np.float64)
        same = handed_back(given) if hands_back else None
        parts = tuple(
            same if same is not None and w == 1.0 else api.make_leaf(Adjoint, w * grad, False)
            for w in self.weights
        )
        return parts if len(parts) > 1 or single_as_tuple or self.as_tuple else parts[0]

    def handed_back(array: Any) -> Any:
        """One tensor holding ``array`` itself, not a copy, where the course's value is an
        attribute (babygrad's ``data``); a copy where it is a method (needle's ``numpy()``)."""
        part = api.make_leaf(Adjoint, np.asarray(array, np.float64), False)
        if not api.value.endswith("()") and isinstance(array, np.ndarray):
            owner, _, name = api.value.rpartition(".")
            setattr(resolve(part, owner) if owner else part, name, array)
        return part

    # The course's op base class, with its own names for the two methods (babygrad's
    # ``forward`` and ``backward``).
    methods = {"__init__": __init__, api.forward: forward, api.backward: backward}
    return type("GivenSum", (getattr(engine.ops, api.function),), methods)


def given_tensor(
    engine: ModuleType, case: dict[str, Any], single_as_tuple: bool = False
) -> tuple[list[Any], list[int], list[int]]:
    """A babygrad graph made of the grader's own weighted-sum ops (``given_sum``); the leaves
    in ``case["frozen"]`` do not require grad. With ``case["wrap_leaves"]`` each leaf is the
    grader's op of one tensor (weight 1), so that when the walk reaches it shows in the calls.
    Also the node indices whose op's backward ran, in call order, and (with
    ``case["count_reads"]``) how often each node's ``_inputs`` were read, both filled in as
    the student's walk runs. With ``case["hands_back"]``, ops hand ``out_grad`` back as they
    are given it (``given_sum``); the ops of one input at the node indices ``case["tuples"]``
    hand their gradient back as a 1-tuple (``Dag.tuple_singles``)."""
    calls: list[int] = []
    api = api_of(engine)
    GivenSum = given_sum(  # noqa: N806
        engine, lambda op: calls.append(op.index), single_as_tuple, bool(case.get("hands_back"))
    )

    dag = case["dag"]
    shape = tuple(case["shape"])
    frozen = set(case.get("frozen", ()))
    nodes = [
        api.make_leaf(engine.Tensor, np.full(shape, 1.0 + i), i not in frozen)
        for i in range(dag["leaves"])
    ]
    tuples = set(case.get("tuples", ()))
    if case.get("wrap_leaves"):
        nodes = [GivenSum([1.0], i, i in tuples)(leaf) for i, leaf in enumerate(nodes)]
    for pairs in dag["nodes"]:
        op = GivenSum([float(w) for _, w in pairs], len(nodes), len(nodes) in tuples)
        nodes.append(op(*(nodes[i] for i, _ in pairs)))
    reads = [0] * len(nodes)
    if case.get("count_reads"):
        for index, node in enumerate(nodes):
            if api.op_of(node) is not None:
                counted = CountedInputs(api.inputs_of(node))
                counted.reads, counted.index = reads, index
                api.set_inputs(node, counted)
    return nodes, calls, reads


CONSTANT_TOUCHED = "a constant was asked for {}: the walk must skip constants (is_constant())"
LEAF_CHAINED = "a leaf was asked for a chain rule: it has no inputs, it gets its derivative with {}"


def given_function(
    base: type, api: FunctionApi, weights: list[float], on_backward: Callable[[float], None]
) -> type:
    """The grader's function: a subclass of the course's function base class whose forward is
    the weighted sum of its inputs and whose backward (``on_backward`` is told what it was
    given) returns each input's weight times ``d_output``, a float for one input."""

    def forward(ctx: Any, *values: float) -> float:
        return float(sum(w * v for w, v in zip(weights, values, strict=True)))

    def backward(ctx: Any, d_output: float) -> Any:
        on_backward(d_output)
        parts = tuple(w * d_output for w in weights)
        return parts[0] if len(parts) == 1 else parts

    methods = {api.forward: staticmethod(forward), api.backward: staticmethod(backward)}
    return type("GivenFunction", (base,), methods)


def _assign(root: Any, dotted: str, value: Any) -> None:
    """``root.a.b = value`` for ``"a.b"``."""
    owner, _, name = dotted.rpartition(".")
    setattr(resolve(root, owner) if owner else root, name, value)


def given_variables(
    engine: Any, api: FunctionApi, dag: dict[str, Any], constants: list[int]
) -> tuple[list[Any], list[list[Any]], list[list[Any]], list[int]]:
    """A graph of the course's own scalars, made by the grader's functions with the course's
    ``apply``, so they carry all the course's scalars carry (a history whose function is the
    grader's and whose inputs a walk may read instead of ``parents``), with the Variable
    protocol the grader's (its names from ``api.variable``): ``chain_rule(d)`` pairs each
    input with its known weight times ``d``, ``accumulate_derivative(x)`` keeps ``x``. The op
    nodes in ``constants`` get one more input, a constant (its history None, as the course
    marks one), which nothing may ask for its parents, derivatives or contributions. Also
    what each node's ``chain_rule`` was given (``received``), what each leaf was given to
    accumulate (``accumulated``) and how often each node's inputs were read, through
    ``parents`` or its history (``reads``), all filled in as the student's walk runs."""
    names = api.variable
    scalar = resolve(engine.package, api.scalar)
    base = resolve(engine.package, api.function)
    history, _, inputs_name = api.inputs.rpartition(".")
    size = dag["leaves"] + len(dag["nodes"])
    received: list[list[Any]] = [[] for _ in range(size)]
    accumulated: list[list[Any]] = [[] for _ in range(size)]
    reads = [0] * size

    def parents(self: Any) -> Any:
        if self._index is None:
            raise ValueError(CONSTANT_TOUCHED.format("its parents"))
        return resolve(self, api.inputs)  # counted as it is read

    def is_leaf(self: Any) -> bool:
        return self._index is not None and not self._weights

    def is_constant(self: Any) -> bool:
        return self._index is None

    # MiniTorch's 2020 chain rule answers the course's VariableWithDeriv holders (api.pair).
    paired = resolve(engine.package, api.pair) if api.pair else lambda *pair: pair

    def chain_rule(self: Any, d_output: Any) -> list[Any]:
        if self._index is None:
            raise ValueError(CONSTANT_TOUCHED.format("a chain rule"))
        if not self._weights:
            raise ValueError(LEAF_CHAINED.format(names["accumulate_derivative"]))
        received[self._index].append(d_output)
        return [paired(p, w * d_output) for p, w in zip(self._inputs, self._weights, strict=True)]

    def accumulate_derivative(self: Any, x: Any) -> None:
        if self._index is None:
            raise ValueError(CONSTANT_TOUCHED.format("a derivative"))
        accumulated[self._index].append(x)

    # MiniTorch's 2021 chain rule is a step of the history (``history.backprop_step(d)``):
    # the grader's is then a method of each op node's copied history, on that node.
    stepper, _, step = names["chain_rule"].rpartition(".")
    protocol = {
        names["parents"]: property(parents),
        names["is_leaf"]: is_leaf,
        names["is_constant"]: is_constant,
        names["accumulate_derivative"]: accumulate_derivative,
    }
    if not stepper:
        protocol[step] = chain_rule
    given: dict[type, type] = {}

    def stepped(record: Any, node: Any) -> None:
        """``record`` (the node's history) answering ``step`` with the grader's chain rule."""
        kind = type(record)
        if kind not in given:
            given[kind] = type("GivenHistory", (kind,), {step: lambda h, d: chain_rule(h._node, d)})
        record.__class__, record._node = given[kind], node

    def stand_in(node: Any, index: int | None, weights: list[float], inputs: list[Any]) -> Any:
        """``node`` made the grader's variable: its protocol the grader's, its history a copy
        whose inputs count their reads (a leaf's is shared by every leaf)."""
        kind = type(node)
        if kind not in given:
            given[kind] = type("GivenVariable", (kind,), protocol)
        node.__class__ = given[kind]
        node._index, node._weights, node._inputs = index, weights, inputs
        if index is None:
            _assign(node, history, None)
            return node
        record = copy.copy(resolve(node, history))
        if getattr(record, inputs_name) is not None:  # a 2021 MiniTorch leaf's are None
            counted = CountedInputs(getattr(record, inputs_name))
            counted.reads, counted.index = reads, index
            setattr(record, inputs_name, counted)
        if stepper:
            stepped(record, node)
        _assign(node, history, record)
        return node

    nodes = [stand_in(api.make_leaf(scalar, 1.0 + i), i, [], []) for i in range(dag["leaves"])]
    for pairs in dag["nodes"]:
        index = len(nodes)
        operands = [nodes[i] for i, _ in pairs]
        weights = [float(w) for _, w in pairs]
        if index in constants:
            operands.append(stand_in(api.make_leaf(scalar, 1.0), None, [], []))
            weights.append(1.0)
        # A 2021 walk may ask the function's chain_rule itself (History.backprop_step's
        # body): the grader's backward is then told what the node received.
        told = received[index].append if stepper else lambda d: None
        function = given_function(base, api, weights, told)
        out = getattr(function, api.apply)(*operands)
        nodes.append(stand_in(out, index, weights, operands))
    return nodes, received, accumulated, reads


def given_scalars(shape: EngineProtocol, dag: dict[str, Any]) -> tuple[list[Any], list[list[Any]]]:
    """A graph of the course's own scalars whose functions are the grader's
    (``shape.stand_in``): subclasses of its function base class, applied with its ``apply``,
    whose backward returns each input's known weight times ``d_output``. What each node's
    backward was given (``received``)."""
    size = dag["leaves"] + len(dag["nodes"])
    received: list[list[Any]] = [[] for _ in range(size)]
    nodes = [shape.leaf(1.0 + i) for i in range(dag["leaves"])]
    for pairs in dag["nodes"]:
        weights = [float(w) for _, w in pairs]
        operands = [nodes[i] for i, _ in pairs]
        nodes.append(shape.stand_in(weights, operands, received[len(nodes)].append))
    return nodes, received
