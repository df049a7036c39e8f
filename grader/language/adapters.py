"""The one protocol through which every course's API is graded, and course adapters: a page of
Python a course ships (``api: {adapter: adapter.py}``) where its API fits none of the grader's
built-in shapes (TinyTorch's ``*Backward`` classes, made after the forward and asked with
``apply(grad_output)`` on bare arrays).

The protocol
------------
Every probe of the worker reaches a student's engine through one object, an ``EngineProtocol``
(below): import the engine, make a leaf, read a value and a gradient, apply an op, ask one op
alone for its gradients, run the student's walk, and build the grader's stand-in op in the
course's object model. The three shapes the grader spells with a profile alone are its
built-in implementations (``grader.worker.shapes``): micrograd's ``Value`` with ``_backward``
closures, a scalar course whose ops are ``Function`` classes (MiniTorch's), and a tensor course
whose ops are op classes with ``backward(out_grad, node)`` (babygrad, needle). A course whose
API fits none of them brings an adapter module, wrapped into the same protocol
(``grader.worker.shapes.adapted``). The protocol's operations, as ``EngineProtocol`` names them:

- **load** (the shape's constructor, from what the runner imported): the student's engine.
- ``leaf(data)``: a leaf that requires grad, holding ``data`` (a float, or a float64 array).
- ``value(node)``: a node's forward value (a float or an array, unencoded).
- ``grad(node)``: the gradient the engine keeps for ``node`` after a walk (None: none yet).
- ``apply(op, inputs)``: the grader's op-table node ``op`` (``grader.language.graphs.Node``:
  its op name and parameter) applied to ``inputs`` as a student would.
- ``build(graph, watch)``: a whole graph as the student's snippet builds it (one node per line,
  each watched by ``watch`` as it is made); a shape without snippets applies each node.
- ``out_grad(out, array)``: the output gradient as the op that made ``out`` is handed it, and
  how to read it again while that op runs (None: a copy the op cannot change).
- ``gradients(out, out_grad)``: ask the op that made ``out``, alone, for its inputs'
  gradients, one per input; the walk, the other ops and the ledger are not involved.
- ``inputs(node)``: the nodes the op recorded as its inputs, where an item grades that record
  (micrograd's ``_prev``); None where it is not graded.
- ``walk(root)``: the student's walk from ``root`` (``root.backward()``); where the course gives
  its walk (an adapter), the grader's walk over the student's ops.
- ``stand_in(weights, inputs)``: the grader's own op in the course's object model, applied to
  ``inputs``: its backward each input's weight times the output gradient, its value the weighted
  sum of its inputs' (micrograd's holds 0.0: no walk item reads it); the walk items grade the
  student's walk over these alone.

Course adapters
---------------
An adapter module maps onto the protocol with five functions, in the course's own words:

- ``load() -> engine``: import the student's engine (the submission is on ``sys.path``);
  whatever it returns is passed back as ``engine``. (**load**)
- ``leaf(engine, data) -> tensor``: a leaf that requires grad, from a float64 array. (``leaf``)
- ``value(tensor) -> array``: a tensor's forward value. (``value``)
- ``apply(engine, op, inputs, param) -> tensor``: op ``op`` of the grader's op table applied
  to ``inputs`` as a student would (``param``: its parameter, None for the default). (``apply``)
- ``gradients(engine, tensor, out_grad) -> sequence``: ask the op that made ``tensor``, alone, for
  its inputs' gradients given ``out_grad``, each delivered as the course's given code
  delivers it to an input (None: no gradient). (``gradients``)

The walk hooks
--------------
Where the walk is the student's (``walk: {topo: nested}``: CMU 11-785's tape, whose
``Autograd.backward`` walks what ``add_operation`` recorded), the adapter also defines four
functions, all or none (``WALK_HOOKS``), through which the walk items reach the student's walk:

- ``tape(engine) -> tape``: a fresh tape (or graph) of the student's for one walk, whatever
  the course makes anew for a forward pass (11-785: an ``Autograd``); it is handed to the
  three others.
- ``record(tape, inputs, output, backward)``: put ``output``, computed from ``inputs``, on
  ``tape`` as the course records an op. ``backward`` is None for an op the adapter's
  ``apply`` made (the student's own op: its backward as the course wires it), or the grader's
  stand-in, a callable ``backward(out_grad) -> list`` giving each input's gradient (the walk
  items record these alone, so only the walk and its ledger are the student's). Before each
  walk the grader records every op node made, in the order they were made: ``apply`` never
  touches the tape, so a tape that raises costs no op item. (``stand_in``)
- ``walk(tape, root, out_grad)``: the student's walk from ``root``, handed ``out_grad``.
  (``walk``)
- ``grad(tape, tensor)``: the gradient the student's walk left for ``tensor`` (None: none).
  (``grad``)

A course whose ledger is a part of its own, apart from its walk (11-785's ``GradientBuffer``),
may also define ``ledger(tape) -> (add, get)``: ``add(tensor, gradient)`` adds a gradient into
the entry of ``tensor`` in the student's ledger, ``get(tensor)`` reads it (None: none). The
ledger items then run the grader's walk over the grader's stand-ins, summing into the
student's ledger; without it they run the student's walk, the ledger being a part of it.

Snippets in the course's words
------------------------------
A course with the walk hooks spells the snippets its students read in its profile
(``api: snippets``, ``grader.language.tape_snippets``: ``SNIPPET_KEYS``, ``SNIPPET_OPTIONS``),
data the trusted parent reads without running the adapter. The worker hands the same mapping
to the adapter as its module's ``SNIPPETS`` (``load_adapter``), so a read both need is spelled
once: 11-785's ``buffer``, the expression that finds the gradient buffer on ``autograd``.

Blame is by counterfactual, as for the built-in shapes: the op items ask the student's ops
alone (``gradients``), the walk items run the student's walk over the grader's stand-ins, and
whole graphs run the student's walk over the student's ops. A walk that starts only at the
end of its tape cannot start at an inner node: the grader draws no second walk from one
(``AssignmentProfile.has``: ``walk.roots``).

Without the hooks the rest of the protocol is the grader's: ``grad`` and ``walk`` are the
grader's walk (each op asked once, newest node first, what reaches each node summed), and the
profile must say the course gives its walk (``topo: given``); a profile that asks to grade a
walk its adapter cannot run is refused when it is loaded, with the reason. ``build`` applies
each node in turn, ``out_grad`` hands over the array itself, ``inputs`` is not graded. Only
the worker runs an adapter (``load_adapter``, called by its runner), on the student's engine;
the trusted parent only checks, without running it, that it defines these functions
(``missing``, ``walk_hooks``, when the profile is loaded).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from grader.language.parsing import parse

if TYPE_CHECKING:
    from grader.language.graphs import Graph, Node

PROTOCOL = ("load", "leaf", "value", "apply", "gradients")
"""The functions an adapter defines."""
WALK_HOOKS = ("tape", "record", "walk", "grad")
"""The functions an adapter whose course grades the student's walk also defines."""


@runtime_checkable
class EngineProtocol(Protocol):
    """A student's engine as every probe sees it (the module's docstring: the protocol)."""

    kind: str
    """``scalar`` (a node holds a float) or ``tensor`` (an array)."""
    gradient_name: str
    """How a report names a node's gradient after the node's variable (``a.grad``,
    MiniTorch's ``a.derivative``)."""
    op_gradient: str
    """How a report names the gradient an op gives its input ``i`` (variable ``v``):
    ``gradient {i}``, ``{v}.grad``."""
    every_grad: bool
    """Does the engine keep a gradient on every node, or on the leaves only?"""

    def leaf(self, data: Any) -> Any:
        """A leaf that requires grad, holding ``data``."""

    def value(self, node: Any) -> Any:
        """``node``'s forward value."""

    def grad(self, node: Any) -> Any:
        """The gradient the engine keeps for ``node`` (None: it has none yet)."""

    def apply(self, op: Node, inputs: Sequence[Any]) -> Any:
        """Op-table node ``op`` applied to ``inputs`` as a student would."""

    def build(self, graph: Graph, watch: Any = None) -> list[Any]:
        """Every node of ``graph``, built as the student's snippet builds it; with a
        ``watch`` (``grader.worker.probes.untouched.Watch``), each op watched as it runs."""

    def out_grad(self, out: Any, array: Any) -> tuple[Any, Callable[[], Any] | None]:
        """The output gradient as the op that made ``out`` is handed it, and how to read it
        while the op runs (None: nothing the op could change)."""

    def gradients(self, out: Any, out_grad: Any) -> list[Any]:
        """The op that made ``out``, asked alone for each input's gradient (a ``ProbeError``
        when it gives another number of them)."""

    def inputs(self, node: Any) -> list[Any] | None:
        """The inputs the op recorded for ``node``, where graded; None where not."""

    def walk(self, root: Any) -> None:
        """The student's walk from ``root`` (the grader's, where the course gives its own)."""

    def stand_in(self, weights: Sequence[float], inputs: Sequence[Any]) -> Any:
        """The grader's weighted-sum op, in the course's object model, applied to ``inputs``."""


def _defined(source: str) -> set[str]:
    """The functions ``source`` defines at its top level (a syntax error raises)."""
    return {node.name for node in parse(source).body if isinstance(node, ast.FunctionDef)}


def missing(source: str) -> list[str]:
    """The protocol's functions ``source`` does not define at its top level (a syntax error
    raises ``SyntaxError``)."""
    defined = _defined(source)
    return [name for name in PROTOCOL if name not in defined]


def walk_hooks(source: str) -> list[str]:
    """The walk hooks ``source`` defines at its top level (``WALK_HOOKS``, in their order)."""
    defined = _defined(source)
    return [name for name in WALK_HOOKS if name in defined]


SNIPPET_KEYS = (
    "imports",
    "leaf",
    "forwards",
    "backwards",
    "tape",
    "record",
    "parameter",
    "walk",
    "grad",
)
"""What a profile's ``api: snippets`` must spell (``grader.language.tape_snippets``)."""
SNIPPET_OPTIONS = (
    "given",
    "buffer",
    "ledger",
    "add",
    "get",
    "answer",
    "walker",
    "ledger_name",
    "value",
)
"""What it may also spell: a ledger apart spells ``ledger``, ``add`` and ``get``."""
SNIPPET_TABLES = ("forwards", "backwards", "given")
"""The keys whose value is a table by op, not a template."""


def ledger_apart(source: str) -> bool:
    """Does the adapter give the student's ledger apart from their walk (``ledger``)?"""
    return "ledger" in _defined(source)


def load_adapter(source: str, name: str, snippets: Mapping[str, Any] | None = None) -> ModuleType:
    """The adapter as a module of its own (in the worker only), its ``SNIPPETS`` the course's
    spelling of snippets (the profile's ``api: snippets``): what the adapter reads of the
    student's engine is then read exactly as the snippets a student sees read it."""
    module = ModuleType(f"course_adapter_{name}")
    exec(compile(source, f"<course adapter {name}>", "exec"), module.__dict__)  # noqa: S102
    module.SNIPPETS = dict(snippets or {})
    return module
