"""Does anything a release ships do a student's work? Run by ``grader.release.release``
(``solution_leaks``) in a fresh interpreter, never imported::

    python -I leak_probe.py RELEASE RESULT.json [SNIPPETS.json]

The release's ``exercises/`` (the stubs: every solution raises ``NotImplementedError``) and its
``grader/`` go first on the path. Each *slot* is one thing a student writes, with a tiny
grader-made example whose answer is known: ``build_topo``, ``zero_grad``, ``Value.backward``,
``Tensor.backward`` (its ledger), each micrograd op's closure, each babygrad op's backward and
``unbroadcast``.
Each *candidate* is tried in every slot, called as a student would call it there: every
module-level and class-level function of every module of the release's ``grader/`` (those
that import), every function and class a feedback snippet defines (the snippets the grader's
builders make for a representative set of failures, every string constant of ``grader/`` that
is code, and ``SNIPPETS.json``; only their definitions run, not their calls), and every
candidate called with the engine alone, entered if it returns a context manager, after which
the stubs' own operators and methods are tried. A candidate that fills a slot is a leak; so is
a slot the stubs fill themselves. The result: ``{"found": [...], "problems": [...],
"candidates": N}``.

Candidates are the grader's own code, called with arguments it does not expect: they run in a
scratch directory, each call within a time limit, and cannot start a process, delete or rename
a file, or sleep. Nothing here is a solution: every expected answer is written out as numbers or
computed by central differences.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import importlib
import importlib.abc
import inspect
import itertools
import json
import math
import os
import signal
import sys
import tempfile
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

CALL_SECONDS = 0.1
"""A candidate's CPU time on one call: an answer takes microseconds on these examples."""
WALL_SECONDS = 2.0
"""Its wall time, for one that waits (on a lock, a queue) rather than computes."""

# ----------------------------------------------------------------------------- the stubs

RELEASE = Path(sys.argv[1]).resolve()
sys.path[:0] = [str(RELEASE), str(RELEASE / "exercises")]


class NoTorch(importlib.abc.MetaPathFinder):
    """The release grades without PyTorch; importing it here would take seconds, and a time
    limit striking inside its extension modules can crash the interpreter."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if fullname == "torch" or fullname.startswith("torch."):
            raise ImportError("torch is not used while looking for leaks")


sys.meta_path.insert(0, NoTorch())

import babygrad  # noqa: E402
import babygrad.ops as bops  # noqa: E402
import micrograd.engine as mg  # noqa: E402

TENSOR_ENGINE = types.SimpleNamespace(Tensor=babygrad.Tensor, ops=bops)
"""babygrad as the grader's probes take it."""


def _restorable() -> list[tuple[Any, dict[str, Any]]]:
    """Everything of the stubs a candidate might patch, as it is now."""
    targets: list[Any] = [mg, bops, babygrad, mg.Value, babygrad.Tensor, TENSOR_ENGINE]
    targets += [c for c in vars(bops).values() if isinstance(c, type)]
    return [(t, dict(vars(t))) for t in targets]


def _changed(saved: list[tuple[Any, dict[str, Any]]]) -> bool:
    """Has anything of the stubs been replaced, added or removed since ``saved``?"""
    for target, attributes in saved:
        current = vars(target)
        if len(current) != len(attributes) or any(
            current.get(name, _MISSING) is not value for name, value in attributes.items()
        ):
            return True
    return False


def _restore(saved: list[tuple[Any, dict[str, Any]]]) -> None:
    for target, attributes in saved:
        current = vars(target)
        for name in [n for n in current if n not in attributes]:
            with contextlib.suppress(Exception):
                delattr(target, name)
        for name, value in attributes.items():
            if current.get(name, _MISSING) is not value:
                with contextlib.suppress(Exception):
                    setattr(target, name, value)


_MISSING = object()
PRISTINE: list[tuple[Any, dict[str, Any]]] = []
"""The stubs as shipped (their forwards written): restored after each candidate."""

# ------------------------------------------------------------------------ slot fixtures

WEIGHTS = (((0, 2.0), (1, 3.0)), ((2, -1.0), (0, 0.5)), ((2, 0.25), (3, 4.0)))
"""Nodes 2, 3, 4 over leaves 0, 1: each node's backward adds weight * its gradient into each
operand. Node 2 is shared by 3 and 4, leaf 0 by 2 and 3."""
GRADS = (-5.5, -11.25, -3.75, 4.0, 1.0)
"""Every node's gradient when node 4's is 1 (written out: 4's passes 0.25 and 4 on, ...)."""


def scalar_dag() -> tuple[list[Any], list[int]]:
    """Five stub Values, the last the root, with the grader's closures (counting calls)."""
    calls = [0] * 5
    nodes = [mg.Value(1.0), mg.Value(2.0)]
    for index, pairs in enumerate(WEIGHTS, start=2):
        out = mg.Value(0.0, tuple(nodes[i] for i, _ in pairs))

        def _backward(out: Any = out, pairs: tuple = pairs, index: int = index) -> None:
            calls[index] += 1
            for i, weight in pairs:
                nodes[i].grad += weight * out.grad

        out._backward = _backward
        nodes.append(out)
    return nodes, calls


class Given(bops.Function):
    """The grader's op: a weighted sum, its backward exact."""

    def __init__(self, *weights: float) -> None:
        self.weights = weights

    def forward(self, *arrays: np.ndarray) -> np.ndarray:
        return sum(w * np.asarray(a, np.float64) for w, a in zip(self.weights, arrays, strict=True))

    def backward(self, out_grad: Any, node: Any) -> tuple[Any, ...]:
        g = np.asarray(getattr(out_grad, "data", out_grad), np.float64)
        return tuple(
            babygrad.Tensor(w * g, requires_grad=False, dtype="float64") for w in self.weights
        )


def tensor_dag() -> list[Any]:
    nodes = [
        babygrad.Tensor(np.full(2, 1.0 + i), requires_grad=True, dtype="float64") for i in range(2)
    ]
    for pairs in WEIGHTS:
        nodes.append(Given(*(w for _, w in pairs))(*(nodes[i] for i, _ in pairs)))
    return nodes


def _close(got: Any, want: Any, rtol: float = 1e-5, atol: float = 1e-7) -> bool:
    try:
        got = np.asarray(getattr(got, "data", got), dtype=np.float64)
    except Exception:  # noqa: BLE001 - not a number: not the answer
        return False
    want = np.asarray(want, dtype=np.float64)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=rtol, atol=atol))


# -------------------------------------------------------------------------- walk slots


def _order_ok(result: Any, nodes: list[Any]) -> bool:
    """Each node once, every operand before (or every operand after) its users."""
    try:
        order = list(itertools.islice(iter(result), 50))
    except Exception:  # noqa: BLE001
        return False
    index = {id(n): i for i, n in enumerate(nodes)}
    numbers = [index.get(id(n), -1) for n in order]
    if sorted(numbers) != list(range(len(nodes))):
        return False
    at = {n: p for p, n in enumerate(numbers)}
    edges = [(i, k) for k, pairs in enumerate(WEIGHTS, start=2) for i, _ in pairs]
    return all(at[i] < at[k] for i, k in edges) or all(at[i] > at[k] for i, k in edges)


def slot_topo(call: Callable[[Any], Any]) -> bool:
    nodes, _ = scalar_dag()
    return _order_ok(call(nodes[-1]), nodes)


def slot_zero_grad(call: Callable[[Any], Any]) -> bool:
    nodes, _ = scalar_dag()
    for i, node in enumerate(nodes):
        node.grad = 0.5 + i
    call(nodes[-1])
    return all(node.grad == 0 for node in nodes)


def slot_backward(call: Callable[[Any], Any], globals_of: Any = None) -> bool:
    """The root seeded with 1 (a candidate may seed it again) and ``build_topo`` returning a
    correct order, wherever the candidate looks it up: only the walk is asked for."""
    nodes, calls = scalar_dag()
    nodes[-1].grad = 1.0
    order = list(nodes)
    with _names(
        {"build_topo": lambda root: list(order)},
        mg.__dict__,
        getattr(globals_of, "__globals__", None),
    ):
        call(nodes[-1])
    return calls[2:] == [1, 1, 1] and all(
        _close(node.grad, want) for node, want in zip(nodes, GRADS, strict=True)
    )


def slot_tensor_backward(call: Callable[[Any], Any]) -> bool:
    """The tensors' ``.grad`` afterwards, or what the call returned (gradients by ``id`` or
    by tensor), must be every node's gradient."""
    nodes = tensor_dag()
    result = call(nodes[-1])
    wants = [np.full(2, g) for g in GRADS]
    if all(_close(getattr(n.grad, "data", n.grad), w) for n, w in zip(nodes, wants, strict=True)):
        return True
    if isinstance(result, dict):
        found = [result.get(id(n), result.get(n) if _hashable(n) else None) for n in nodes]
        return all(f is not None and _close(f, w) for f, w in zip(found, wants, strict=True))
    return False


def _hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


@contextlib.contextmanager
def _names(replacements: dict[str, Any], *namespaces: dict[str, Any] | None) -> Iterator[None]:
    saved = []
    for namespace in namespaces:
        if namespace is None:
            continue
        for name, value in replacements.items():
            if name in namespace:
                saved.append((namespace, name, namespace[name]))
                namespace[name] = value
    try:
        yield
    finally:
        for namespace, name, value in reversed(saved):
            namespace[name] = value


WALK_SLOTS = {
    "micrograd.topo (build_topo)": ("scalar", slot_topo),
    "micrograd.zero_grad (zero_grad)": ("scalar", slot_zero_grad),
    "micrograd.backward (Value.backward)": ("scalar", slot_backward),
    "babygrad.backward (Tensor.backward and its ledger)": ("tensor", slot_tensor_backward),
}

# ---------------------------------------------------------------------------- op slots

SCALAR_OPS = {  # name: (forward, operands, how a student writes it)
    "add": (lambda a, b: a + b, (0.75, -1.25), lambda a, b: a + b),
    "mul": (lambda a, b: a * b, (0.75, -1.25), lambda a, b: a * b),
    "pow": (lambda a: a**3, (0.75,), lambda a: a**3),
    "tanh": (lambda a: math.tanh(a), (0.75,), lambda a: a.tanh()),
    "exp": (lambda a: math.exp(a), (0.75,), lambda a: a.exp()),
    "relu": (lambda a: max(a, 0.0), (0.75,), lambda a: a.relu()),
}


def slot_scalar_op(name: str, build: Callable[..., Any]) -> bool:
    """``build(*operands)`` (stub Values; ``**`` also with its exponent) must give a new node
    holding the value and, after ``out._backward()`` with ``out.grad = 0.5``, each operand's
    gradient."""
    forward, values, _ = SCALAR_OPS[name]
    operands = [mg.Value(v) for v in values]
    out = build(*operands)
    if any(out is x for x in operands) or not _close(getattr(out, "data", None), forward(*values)):
        return False  # an operand itself is no op's result (relu(0.75) is 0.75)
    out.grad = 0.5
    out._backward()
    return all(_close(x.grad, w) for x, w in zip(operands, _scalar_wants(name), strict=True))


@functools.cache
def _scalar_wants(name: str) -> list[np.ndarray]:
    from grader.oracles.numeric import vjp

    forward, values, _ = SCALAR_OPS[name]
    return vjp(
        lambda *xs: forward(*(float(x) for x in xs)),
        [np.array(v, dtype=np.float64) for v in values],
        np.float64(0.5),
    )


TENSOR_CASES: dict[str, tuple[str, Any, list[np.ndarray]]] = {}
"""Function class name: (op, parameter, inputs), filled from the release's op table."""


@functools.cache
def _tensor_wants(cls_name: str) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The op's value on its case, a drawn ``out_grad`` and each input's gradient."""
    from grader.language.graphs import OPS
    from grader.oracles.numeric import numeric_vjp

    op, param, arrays = TENSOR_CASES[cls_name]
    value = np.asarray(OPS[op].forward(*arrays, param), np.float64)
    g = np.linspace(-1.0, 1.5, value.size).reshape(value.shape) + 0.125
    return value, g, numeric_vjp(op, param, arrays, g)


def _tensor_cases() -> dict[str, tuple[str, Any, list[np.ndarray]]]:
    """One example per op class of the release's op table, shapes chosen so that no identity
    or simple function of the arguments is the answer (broadcast operands, a permutation
    that is not its own inverse, mixed signs)."""
    from grader.language.graphs import OPS

    mixed = np.array([[0.5, -1.25, 2.0], [-0.75, 1.5, -0.25]])
    positive = np.array([[0.5, 1.25, 2.0], [0.75, 1.5, 0.25]])
    row = np.array([1.5, -0.5, 2.5])
    chosen = {
        "add": (None, [mixed, row]),
        "mul": (None, [mixed, row]),
        "sub": (None, [mixed, row]),
        "div": (None, [mixed, row]),
        "pow": (None, [positive, row]),
        "neg": (None, [mixed]),
        "log": (None, [positive]),
        "exp": (None, [mixed]),
        "sqrt": (None, [positive]),
        "abs": (None, [mixed]),
        "relu": (None, [mixed]),
        "sigmoid": (None, [mixed]),
        "tanh": (None, [mixed]),
        "powk": (3, [positive]),
        "mul_scalar": (2.5, [mixed]),
        "div_scalar": (4.0, [mixed]),
        "reshape": ((3, 2), [mixed]),
        "transpose": ((1, 2, 0), [np.arange(24.0).reshape(2, 3, 4) / 8 - 1]),
        "sum": (1, [mixed]),
        "broadcast_to": ((2, 3), [row]),
        "matmul": (None, [mixed, positive.T.copy()]),
    }
    # add_scalar's backward is out_grad itself: any function that returns its argument
    # "fills" it, so it proves nothing.
    cases = {}
    for op in OPS.values():
        if op.function is not None and op.name in chosen:
            param, inputs = chosen[op.name]
            cases[op.function.name] = (op.name, param, inputs)
    return cases


def write_forwards() -> None:
    """Every stub op's forward as a student writes it, first: the slots ask for backwards,
    and a grader part that needs the forward to have run (or asks whether it is written)
    must be found all the same."""
    from grader.language.graphs import OPS

    for op in OPS.values():
        cls = getattr(bops, op.function.name, None) if op.function else None
        if isinstance(cls, type):

            def forward(
                self: Any, *arrays: Any, op: str = op.name, keeps: str | None = op.function.keeps
            ) -> np.ndarray:
                param = getattr(self, keeps) if keeps else None
                return np.asarray(OPS[op].forward(*arrays, param))

            cls.forward = forward


UNBROADCAST = ((2, 3, 4), (3, 1))
"""A gradient's shape, and the shape it was broadcast from (an axis prepended, one stretched)."""


@functools.cache
def _unbroadcast_wants() -> tuple[np.ndarray, np.ndarray]:
    from grader.oracles.numeric import numeric_vjp

    big, small = UNBROADCAST
    g = np.linspace(-1.0, 1.5, math.prod(big)).reshape(big) + 0.125
    return g, numeric_vjp("broadcast_to", big, [np.zeros(small)], g)[0]


def slot_unbroadcast(call: Callable[[np.ndarray, tuple[int, ...]], Any]) -> bool:
    """``unbroadcast(grad, shape)``: ``grad`` summed back to ``shape``."""
    g, want = _unbroadcast_wants()
    return _close(call(g.copy(), UNBROADCAST[1]), want)


def slot_tensor_op(
    cls_name: str,
    case: tuple[str, Any, list[np.ndarray]],
    backward: Callable[[Any, Any, Any], Any] | None,
) -> bool:
    """The op's backward (``backward(function, out_grad, node)``, or the stub's own) must
    return each input's gradient for a drawn ``out_grad``."""
    _, param, arrays = case
    cls = getattr(bops, cls_name)
    function = cls(param) if param is not None else cls()
    inputs = [babygrad.Tensor(a, requires_grad=True, dtype="float64") for a in arrays]
    value, g, wants = _tensor_wants(cls_name)
    try:
        out = function(*inputs)
    except Exception:  # noqa: BLE001 - the stub's forward: make the node by hand
        out = babygrad.Tensor(value, requires_grad=True, dtype="float64")
        out._op, out._inputs = function, tuple(inputs)
    call = backward or (lambda f, grad, node: f.backward(grad, node))
    parts = call(function, babygrad.Tensor(g, requires_grad=False, dtype="float64"), out)
    if not isinstance(parts, tuple | list):
        parts = (parts,)
    return len(parts) == len(wants) and all(
        _close(part, want, rtol=1e-4, atol=1e-6) for part, want in zip(parts, wants, strict=True)
    )


# ----------------------------------------------------------------- calling candidates


class Timeout(Exception):
    pass


def _alarm(*_: Any) -> None:
    raise Timeout


def _limit() -> None:
    """Until ``_unlimit``, ``Timeout`` is raised every ``CALL_SECONDS`` of CPU time (machine
    load does not move it) and every ``WALL_SECONDS``: a candidate that catches one meets the
    next."""
    signal.setitimer(signal.ITIMER_PROF, CALL_SECONDS, CALL_SECONDS)
    signal.setitimer(signal.ITIMER_REAL, WALL_SECONDS, WALL_SECONDS)


def _unlimit() -> None:
    signal.setitimer(signal.ITIMER_PROF, 0)
    signal.setitimer(signal.ITIMER_REAL, 0)


def attempt(run: Callable[..., bool], *args: Any) -> bool:
    """``run(*args)``, a candidate inside it, within its time (``_limit``): any failure is False
    (whatever a candidate changed of the stubs is put back after all its trials)."""
    _limit()
    try:
        return bool(run(*args))
    except BaseException as exc:  # noqa: BLE001 - a candidate that fails fills nothing
        if isinstance(exc, KeyboardInterrupt):
            raise
        return False
    finally:
        _unlimit()


def _positional(function: Callable[..., Any]) -> tuple[int, int] | None:
    """How many positional arguments ``function`` needs and takes (None: not callable so)."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.KEYWORD_ONLY and p.default is p.empty for p in parameters):
        return None
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    needed = sum(p.default is p.empty for p in positional)
    takes = math.inf if any(p.kind is p.VAR_POSITIONAL for p in parameters) else len(positional)
    return needed, takes


def _walk_extras(kind: str) -> list[Any]:
    """What a student would pass beside the root: how to find a node's operands, the engine,
    nothing (an empty tuple)."""
    if kind == "scalar":
        return [lambda n: n._prev, mg, ()]
    return [lambda n: n._inputs, TENSOR_ENGINE, babygrad, ()]


def _arrangements(
    needed: int, takes: float, primary: list[Any], extras: list[Any]
) -> Iterator[list[Any]]:
    """The slot's own arguments, with up to two extras around them."""
    if needed <= len(primary) <= takes:
        yield list(primary)
    for more in (1, 2):
        count = len(primary) + more
        if not needed <= count <= takes:
            continue
        for fill in itertools.product(range(len(extras)), repeat=more):
            for at in range(more + 1):
                chosen = [extras[i] for i in fill]
                yield chosen[:at] + list(primary) + chosen[at:]


def try_walks(name: str, function: Callable[..., Any], found: list[str]) -> None:
    """``function`` where a walk goes: with the root, and the extras around it."""
    shape = _positional(function)
    if shape is None or shape[1] == 0:
        return
    for slot, (kind, run) in WALK_SLOTS.items():
        extras = _walk_extras(kind)
        for arrangement in _arrangements(*shape, [None], extras):
            at = arrangement.index(None)

            def call(root: Any, arrangement: list[Any] = arrangement, at: int = at) -> Any:
                args = list(arrangement)
                args[at] = root
                return function(*args)

            filled = attempt(run, call, function) if run is slot_backward else attempt(run, call)
            if filled:
                found.append(f"{name} does {slot}")
                break


def try_ops(name: str, function: Callable[..., Any], found: list[str]) -> None:
    """``function`` where an op goes: making a micrograd op's result from its operands,
    ``unbroadcast(grad, shape)``, and a babygrad op's backward (``backward(self, out_grad,
    node)`` with the op as ``self``, or ``backward(out_grad, node)``)."""
    shape = _positional(function)
    if shape is None or shape[1] == 0:
        return
    needed, takes = shape
    for op, (_, values, _) in SCALAR_OPS.items():
        count = 2 if op == "pow" else len(values)
        build = (lambda a: function(a, 3)) if op == "pow" else function
        if needed <= count <= takes and attempt(slot_scalar_op, op, build):
            found.append(f"{name} does micrograd.ops.{op} (its result and closure)")
    if needed <= 2 <= takes and attempt(slot_unbroadcast, function):
        found.append(f"{name} does babygrad.broadcasting (unbroadcast)")
    for cls_name, case in TENSOR_CASES.items():
        for count, backward in ((3, function), (2, lambda f, g, node: function(g, node))):
            if needed <= count <= takes and attempt(slot_tensor_op, cls_name, case, backward):
                found.append(f"{name} does babygrad.ops.{cls_name}.backward")
                break


def baseline(label: str, found: list[str]) -> None:
    """The stubs' own functions and operators in every slot (after ``label`` installed
    something, or as shipped)."""
    own = {
        "micrograd.topo (build_topo)": lambda root: mg.build_topo(root),
        "micrograd.zero_grad (zero_grad)": lambda root: mg.zero_grad(root),
        "micrograd.backward (Value.backward)": lambda root: root.backward(),
        "babygrad.backward (Tensor.backward and its ledger)": lambda root: root.backward(),
    }
    for slot, (_, run) in WALK_SLOTS.items():
        if attempt(run, own[slot]):
            found.append(f"{label} does {slot}")
    for op, (_, _, written) in SCALAR_OPS.items():
        if attempt(slot_scalar_op, op, written):
            found.append(f"{label} does micrograd.ops.{op} (its result and closure)")
    if attempt(slot_unbroadcast, bops.unbroadcast):
        found.append(f"{label} does babygrad.broadcasting (unbroadcast)")
    for cls_name, case in TENSOR_CASES.items():
        if attempt(slot_tensor_op, cls_name, case, None):
            found.append(f"{label} does babygrad.ops.{cls_name}.backward")


def try_installing(name: str, function: Callable[..., Any], found: list[str]) -> None:
    """``function(engine)``: if that returns a context manager, the stubs inside it; if it
    changed the stubs, after it."""
    shape = _positional(function)
    if shape is None or not shape[0] <= 1 <= shape[1]:
        return
    for engine in (mg, TENSOR_ENGINE, babygrad):
        _limit()
        try:
            result = function(engine)
            _unlimit()
            if hasattr(result, "__enter__") and hasattr(result, "__exit__"):
                _limit()
                with result:
                    _unlimit()
                    baseline(f"{name}(engine), entered,", found)
            elif _changed(PRISTINE):
                baseline(f"{name}(engine)", found)
        except BaseException as exc:  # noqa: BLE001 - installs nothing
            if isinstance(exc, KeyboardInterrupt):
                raise
        finally:
            _unlimit()
            if _changed(PRISTINE):
                _restore(PRISTINE)


# ------------------------------------------------------------------------- candidates


def grader_modules(problems: list[str]) -> list[types.ModuleType]:
    modules = []
    for path in sorted((RELEASE / "grader").rglob("*.py")):
        parts = path.relative_to(RELEASE).with_suffix("").parts
        if parts[-1] == "__main__":
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        try:
            modules.append(importlib.import_module(name))
        except (Exception, SystemExit):  # noqa: BLE001 - a module that does not import
            problems.append(f"{name} does not import here: its functions were not tried")
    return modules


def functions_of(
    namespace: dict[str, Any], module: str | None, prefix: str
) -> Iterator[tuple[str, Callable[..., Any]]]:
    """Module-level functions and class-level functions defined in ``namespace``."""
    for name, value in list(namespace.items()):
        if module is not None and getattr(value, "__module__", None) != module:
            continue
        if inspect.isfunction(value):
            yield f"{prefix}{name}", value
        elif inspect.isclass(value):
            for attribute, member in vars(value).items():
                if isinstance(member, staticmethod | classmethod):
                    member = member.__func__
                if inspect.isfunction(member):
                    yield f"{prefix}{name}.{attribute}", member


def snippet_definitions(label: str, text: str) -> dict[str, Any]:
    """The functions and classes ``text`` defines, defined (its imports run too; nothing
    else of it)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    keep = [
        node
        for node in tree.body
        if isinstance(
            node,
            ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom,
        )
    ]
    if not any(isinstance(n, ast.FunctionDef | ast.ClassDef) for n in keep):
        return {}
    namespace: dict[str, Any] = {"__name__": "snippet"}
    for node in keep:  # one at a time: a definition that fails costs only itself
        module = ast.Module(body=[node], type_ignores=[])
        _limit()
        try:
            exec(compile(module, f"<{label}>", "exec"), namespace)  # noqa: S102
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
        finally:
            _unlimit()
    return namespace


def code_constants(modules: list[types.ModuleType]) -> Iterator[tuple[str, str]]:
    """Every string constant of the release's ``grader/`` that is Python with a definition."""
    for module in modules:
        path = getattr(module, "__file__", None)
        if not path:
            continue
        for node in ast.walk(ast.parse(Path(path).read_text())):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and ("def " in node.value or "class " in node.value)
            ):
                yield f"{module.__name__}:{node.lineno}", node.value


def builder_snippets(problems: list[str]) -> Iterator[tuple[str, str]]:
    """What the grader's snippet builders print for a representative set of failures."""
    from grader.language.assignments import BABYGRAD, MICROGRAD
    from grader.language.dags import Dag
    from grader.language.graphs import Graph, Node

    scalar = Graph(
        "scalar", (1.5, -2.0), (Node("sub", (0, 1)), Node("tanh", (2,)), Node("mul", (3, 0)))
    )
    tensor = Graph(
        "tensor",
        (np.array([[0.5, -1.0, 2.0]]), np.array([1.5, 0.5, -2.0])),
        (Node("mul", (0, 1)), Node("sum", (2,), None)),
    )
    primitives = Graph(
        "scalar", (0.5,), (Node("tanh", (0,)), Node("tanh", (0,)), Node("add", (1, 2)))
    )
    dag = Dag(2, (((0, 1.0), (1, -1.5)), ((2, 2.0), (0, 0.25)), ((3, 1.0), (2, 1.0))))
    one = Graph("tensor", (np.array([[0.5, -1.0]]), np.array([1.5, 0.5])), (Node("add", (0, 1)),))
    builders: list[tuple[str, str, str, tuple[Any, ...], dict[str, Any]]] = [
        ("grader.language.snippets", "graph_snippet", "graph", (scalar, MICROGRAD), {}),
        ("grader.language.snippets", "graph_snippet", "tensor graph", (tensor, BABYGRAD), {}),
        (
            "grader.checks.accumulation",
            "accumulate_snippet",
            "accumulate, composed",
            (scalar, 2.0, [0.5, -1.25]),
            {},
        ),
        (
            "grader.checks.accumulation",
            "accumulate_snippet",
            "accumulate, primitives",
            (primitives, 2.0, [0.5]),
            {},
        ),
        ("grader.language.snippets", "dag_snippet", "dag", (dag, "{root}.backward()"), {}),
        (
            "grader.language.snippets",
            "tensor_dag_snippet",
            "tensor dag",
            (BABYGRAD.api, dag, (2,)),
            {"order": True, "wrap_leaves": True},
        ),
        ("grader.checks.walks", "chain_snippet", "chain", (100,), {}),
        ("grader.checks.walks", "diamond_snippet", "diamonds", (MICROGRAD,), {}),
        ("grader.checks.walks", "diamond_snippet", "tensor diamonds", (BABYGRAD,), {}),
        ("grader.checks.walks", "diamond_walk_snippet", "diamond walk", (BABYGRAD.api, 3), {}),
        (
            "grader.checks.ops",
            "op_snippet",
            "op",
            (Graph("scalar", (0.5,), (Node("tanh", (0,)),)), np.float64(1.5), MICROGRAD),
            {},
        ),
        (
            "grader.checks.ops",
            "op_snippet",
            "tensor op",
            (one, np.array([[1.0, -2.0]]), BABYGRAD),
            {},
        ),
        (
            "grader.checks.broadcasting",
            "broadcast_snippet",
            "broadcast",
            (one, np.array([[1.0, -2.0]])),
            {},
        ),
    ]
    for module, function, label, args, kwargs in builders:
        try:
            yield (
                f"the {label} snippet",
                getattr(importlib.import_module(module), function)(*args, **kwargs),
            )
        except Exception as exc:  # noqa: BLE001
            problems.append(
                f"the {label} snippet ({module}.{function}) could not be made: "
                f"{type(exc).__name__}: {exc}"
            )


# ------------------------------------------------------------------------------ guards


def _refuse(*_: Any, **__: Any) -> Any:
    raise PermissionError("not while looking for leaks")


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """No process started, signalled or replaced, no file deleted or renamed, no sleep, no
    output: candidates run on arguments they do not expect."""
    import shutil
    import subprocess
    import time

    refused = [
        (subprocess.Popen, "__init__"),
        (os, "system"),
        (os, "fork"),
        (os, "kill"),
        (os, "killpg"),
        (os, "execv"),
        (os, "execve"),
        (os, "execvp"),
        (os, "remove"),
        (os, "unlink"),
        (os, "rmdir"),
        (os, "removedirs"),
        (os, "rename"),
        (os, "replace"),
        (os, "chdir"),
        (shutil, "rmtree"),
        (shutil, "move"),
        (time, "sleep"),
        (builtins, "input"),
        (sys, "exit"),
        (os, "_exit"),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name in refused]
    for owner, name, _ in saved:
        setattr(owner, name, _refuse)
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    try:
        yield
    finally:
        sys.stdout.close()
        sys.stdout, sys.stderr = stdout, stderr
        for owner, name, original in saved:
            setattr(owner, name, original)


def main() -> None:
    result_path = Path(sys.argv[2])
    extra = json.loads(Path(sys.argv[3]).read_text()) if len(sys.argv) > 3 else []
    found: list[str] = []
    problems: list[str] = []
    signal.signal(signal.SIGALRM, _alarm)
    signal.signal(signal.SIGPROF, _alarm)
    work = tempfile.mkdtemp(prefix="grader-leaks-")
    os.chdir(work)
    modules = grader_modules(problems)
    TENSOR_CASES.update(_tensor_cases())
    write_forwards()
    PRISTINE[:] = _restorable()
    snippets = [
        *code_constants(modules),
        *builder_snippets(problems),
        *((f"snippet {i}", text) for i, text in enumerate(extra)),
    ]
    candidates: list[tuple[str, Callable[..., Any]]] = []
    for module in modules:
        candidates += functions_of(vars(module), module.__name__, f"{module.__name__}.")
    for label, text in snippets:
        candidates += functions_of(snippet_definitions(label, text), "snippet", f"{label}: ")
    with guarded():
        baseline("exercises/ (the stubs)", found)
        for name, function in candidates:
            if getattr(function, "is_hypothesis_test", False):
                continue  # a grading test: it draws examples for a grading session
            for trial in (try_walks, try_ops, try_installing):
                try:
                    trial(name, function, found)
                except BaseException as exc:  # noqa: BLE001 - a limit struck between calls
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                finally:
                    _unlimit()
                    if _changed(PRISTINE):  # whatever it changed, put back
                        _restore(PRISTINE)
    result_path.write_text(
        json.dumps(
            {"found": sorted(set(found)), "problems": problems, "candidates": len(candidates)}
        )
    )


if __name__ == "__main__":
    main()
