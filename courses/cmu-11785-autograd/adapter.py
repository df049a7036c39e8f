"""CMU 11-785's mytorch autograd through the grader's adapter protocol
(grader/language/adapters.py), with the walk hooks: the tape is the student's.

The course's forwards are numpy (the layers compute them); its ops are the functional
backwards, add_backward(grad_output, a, b) and the rest, asked alone with the inputs as the
tape asks them, each answer one array per input with broadcasting already reduced. For a walk,
each op goes on a fresh Autograd with add_operation, every other leaf as a parameter (its
gradient routed into an array of gradients_to_update, the rest into the gradient buffer), and
Autograd.backward(divergence) walks it; the buffer's item sums into the student's
GradientBuffer with the grader's walk (ledger). Runs in the worker only.
"""

import importlib
import importlib.util
import types
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np

SNIPPETS: Mapping[str, Any] = {}
"""The profile's ``api: snippets``, how a snippet a student reads is written: set by the worker
when it loads this file (grader/language/adapters.py, ``load_adapter``)."""


FUNCTIONAL = ("mytorch.functional", "mytorch.functional_hw1", "mytorch.nn.functional")
"""Where each edition keeps the backwards: HW3P1 (and this course's reference), the 2024 HW1
handout, the 2022 starter."""


def load():
    """The student's autograd_engine and functional modules, what each op made, and how
    their one-input backwards answer (stand-ins answer alike)."""
    engine = types.SimpleNamespace(
        autograd=importlib.import_module("mytorch.autograd_engine"),
        functional=_functional(),
        made={},
    )
    engine.bare = _answers_bare(engine.functional)
    # the names the snippets' backwards use, defined as the snippets define them
    engine.names = {"np": np, "BARE": engine.bare, "functional": engine.functional}
    exec("\n".join(SNIPPETS.get("given", {}).values()), engine.names)  # noqa: S102
    return engine


def _functional():
    for name in FUNCTIONAL:
        if importlib.util.find_spec(name) is not None:
            return importlib.import_module(name)
    raise ImportError(f"no module of the backwards: looked for {', '.join(FUNCTIONAL)}")


ONE_INPUT = (("exp_backward", 1.0, 2.0 * np.e), ("log_backward", 4.0, 0.5))
"""One-input backwards, each with an input and its right answer to an out_grad of 2."""


def _answers_bare(functional):
    """Does a one-input backward answer with the array itself, as the handouts' own do
    (identity_backward, HW3P1's log_backward), rather than a tuple of one? The student's first
    one-input backward that answers right tells (their tape reads their backwards): a wrong one,
    a body that does nothing, would tell it wrongly and cost the walk items too. Without a right
    answer, the handouts'. The snippets' imports say the same (answers_bare)."""
    for name, x, right in ONE_INPUT:
        try:
            answer = getattr(functional, name)(np.full(1, 2.0), np.full(1, x))
            one = isinstance(answer, tuple | list)
            if np.allclose(np.asarray(answer[0] if one else answer, dtype=float), right):
                return not one
        except Exception:  # noqa: BLE001, S112 - a backward that fails tells nothing: its item says it
            continue
    return True


def _buffer(autograd):
    """The tape's buffer, found as the snippets find it (``buffer``: the 2022 starter named it
    otherwise than later years)."""
    return eval(SNIPPETS["buffer"], {"autograd": autograd})  # noqa: S307 - the profile's


def leaf(engine, data):
    return np.array(data, dtype=np.float64)


def value(tensor):
    return tensor


def apply(engine, op, inputs, param):
    """The forward alone, computed as the snippets write it (the tape is the walk's: record),
    and the backward the snippets call for it."""
    if op == "sum" and param is not None:
        raise ValueError("the course sums whole arrays only")
    names = {f"x{i}": array for i, array in enumerate(inputs)}
    forward = SNIPPETS["forwards"][op].format(*names)
    output = np.asarray(eval(forward, {"np": np, **names}), dtype=np.float64)  # noqa: S307
    backward = eval(SNIPPETS["backwards"][op], engine.names)  # noqa: S307
    engine.made[id(output)] = (backward, list(inputs))
    weakref.finalize(output, engine.made.pop, id(output), None)
    return output


def gradients(engine, tensor, out_grad):
    """One array per input; a None after them is no array's (HW3P1's given tanh_backward
    answers (grad, None), a tape zipping it with its one input)."""
    function, inputs = engine.made[id(tensor)]
    grads = function(out_grad, *inputs)
    grads = list(grads) if isinstance(grads, tuple | list) else [grads]
    extra = grads[len(inputs) :]
    return grads[: len(inputs)] if extra and all(g is None for g in extra) else grads


def tape(engine):
    """A fresh Autograd, and the parameters' gradient arrays by leaf. The handout allows one
    Autograd at a time (its __del__ frees the slot, its tests delete one before the next): the
    last walk's may still be alive, so the slot is freed first."""
    engine.autograd.Autograd._has_instance = False
    return types.SimpleNamespace(
        engine=engine, autograd=engine.autograd.Autograd(), outputs=set(), leaves={}, params={}
    )


def record(tape, inputs, output, backward):
    """add_operation, as a layer calls it: the op's own functional backward, or the grader's
    stand-in; every other leaf a parameter, its gradient array in gradients_to_update."""
    if backward is None:
        operation = tape.engine.made[id(output)][0]
    else:

        def operation(grad_output, *arrays):  # answers as the snippets' stand-ins answer
            answer = {"BARE": tape.engine.bare, "grads": backward(grad_output)}
            return eval(SNIPPETS["answer"], answer)  # noqa: S307

    updates = []
    for array in inputs:
        if id(array) not in tape.outputs and id(array) not in tape.leaves:
            tape.leaves[id(array)] = len(tape.leaves)
            if len(tape.leaves) % 2 == 0:
                tape.params[id(array)] = np.zeros_like(array)
        updates.append(tape.params.get(id(array)))
    tape.outputs.add(id(output))
    tape.autograd.add_operation(list(inputs), output, updates, operation)


def walk(tape, root, out_grad):
    tape.autograd.backward(out_grad)


def ledger(tape):
    """The student's GradientBuffer, apart from their tape: the buffer's item is graded with
    the grader's walk summing into it (add_spot, then update_param), read with get_param."""
    buffer = _buffer(tape.autograd)

    def add(tensor, gradient):
        buffer.add_spot(tensor)
        buffer.update_param(tensor, gradient)

    def get(tensor):
        return buffer.get_param(tensor) if buffer.is_in_memory(tensor) else None

    return add, get


def grad(tape, tensor):
    """A parameter's gradient array; any other array's buffer entry (None: none)."""
    if id(tensor) in tape.params:
        return tape.params[id(tensor)]
    buffer = _buffer(tape.autograd)
    return buffer.get_param(tensor) if buffer.is_in_memory(tensor) else None
