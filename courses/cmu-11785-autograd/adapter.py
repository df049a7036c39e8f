"""CMU 11-785's mytorch through the adapter protocol (grader/language/adapters.py), with the
walk hooks: the tape is the student's, walked over the ops each on a fresh Autograd. What a
snippet also writes (the imports, which find the backwards and how they answer; each forward
and backward; the buffer) is the profile's api: snippets, run here as a snippet runs it, so a
student is shown the code that was graded. Runs in the worker only."""

import types
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np

SNIPPETS: Mapping[str, Any] = {}
"""The profile's ``api: snippets``: set by the worker when it loads this file."""


def load():
    """The names the snippets' imports and given backwards define, and what each op made."""
    names: dict[str, Any] = {}
    exec("\n".join([SNIPPETS["imports"], *SNIPPETS.get("given", {}).values()]), names)  # noqa: S102
    return types.SimpleNamespace(names=names, made={})


def leaf(engine, data):
    return np.array(data, dtype=np.float64)


def value(tensor):
    return tensor


def apply(engine, op, inputs, param):
    """The forward alone (``record`` puts it on a tape), and the backward the snippets call."""
    if op == "sum" and param is not None:
        raise ValueError("the course sums whole arrays only")
    arrays = {f"x{i}": array for i, array in enumerate(inputs)}
    forward = eval(SNIPPETS["forwards"][op].format(*arrays), engine.names, arrays)  # noqa: S307
    output = np.asarray(forward, dtype=np.float64)
    engine.made[id(output)] = (eval(SNIPPETS["backwards"][op], engine.names), list(inputs))  # noqa: S307
    weakref.finalize(output, engine.made.pop, id(output), None)
    return output


def gradients(engine, tensor, out_grad):
    """One array per input; Nones after them are no array's (HW3P1's given tanh_backward
    answers (grad, None): a tape zips it with its one input)."""
    function, inputs = engine.made[id(tensor)]
    grads = function(out_grad, *inputs)
    grads = list(grads) if isinstance(grads, tuple | list) else [grads]
    extra = grads[len(inputs) :]
    return grads[: len(inputs)] if extra and all(g is None for g in extra) else grads


def tape(engine):
    """A fresh Autograd (its slot freed first: the handout allows one at a time and the last
    walk's may be alive), and the parameters' gradient arrays by leaf."""
    engine.names["Autograd"]._has_instance = False
    return types.SimpleNamespace(
        engine=engine, autograd=engine.names["Autograd"](), outputs=set(), leaves=set(), params={}
    )


def record(tape, inputs, output, backward):
    """add_operation, as a layer calls it: the op's own functional backward, or the grader's
    stand-in; every other leaf a parameter, its gradient array in gradients_to_update."""
    if backward is None:
        operation = tape.engine.made[id(output)][0]
    else:

        def operation(grad_output, *arrays):  # answers as the snippets' stand-ins answer
            grads = {"grads": backward(grad_output)}
            return eval(SNIPPETS["answer"], tape.engine.names, grads)  # noqa: S307

    for array in inputs:
        if id(array) not in tape.outputs | tape.leaves:
            tape.leaves.add(id(array))
            if len(tape.leaves) % 2 == 0:
                tape.params[id(array)] = np.zeros_like(array)
    updates = [tape.params.get(id(array)) for array in inputs]
    tape.outputs.add(id(output))
    tape.autograd.add_operation(list(inputs), output, updates, operation)


def walk(tape, root, out_grad):
    tape.autograd.backward(out_grad)


def ledger(tape):
    """The student's GradientBuffer, apart from their tape: the buffer's item is graded with
    the grader's walk summing into it (add_spot, then update_param), read with get_param."""
    buffer = eval(SNIPPETS["buffer"], tape.engine.names, {"autograd": tape.autograd})  # noqa: S307

    def add(tensor, gradient):
        buffer.add_spot(tensor)
        buffer.update_param(tensor, gradient)

    def get(tensor):
        return buffer.get_param(tensor) if buffer.is_in_memory(tensor) else None

    return add, get


def grad(tape, tensor):
    """A parameter's gradient array; any other array's buffer entry (None: none)."""
    return tape.params[id(tensor)] if id(tensor) in tape.params else ledger(tape)[1](tensor)
