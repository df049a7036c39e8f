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
import types
import weakref

import numpy as np

FORWARDS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "matmul": np.matmul,
    "matmul_2d": np.matmul,
    "log": np.log,
    "exp": np.exp,
    "tanh": np.tanh,
    "sigmoid": lambda a: 1.0 / (1.0 + np.exp(-a)),
    "sum": np.sum,
}
"""Each op's forward, as the course's layers compute it."""


SNIPPETS = {
    "imports": "import numpy as np\nfrom mytorch import functional\n"
    "from mytorch.autograd_engine import Autograd",
    "leaf": "np.array({data})",
    "forwards": {
        "add": "{0} + {1}",
        "sub": "{0} - {1}",
        "mul": "{0} * {1}",
        "div": "{0} / {1}",
        "matmul_2d": "{0} @ {1}",
        "log": "np.log({0})",
        "exp": "np.exp({0})",
        "tanh": "np.tanh({0})",
        "sigmoid": "1.0 / (1.0 + np.exp(-{0}))",
        "sum": "np.asarray({0}.sum())",
    },
    "backwards": {
        "add": "functional.add_backward",
        "sub": "functional.sub_backward",
        "mul": "functional.mul_backward",
        "div": "functional.div_backward",
        "matmul_2d": "functional.matmul_backward",
        "log": "functional.log_backward",
        "exp": "functional.exp_backward",
        "tanh": "functional.tanh_backward",
        "sigmoid": "functional.sigmoid_backward",
        "sum": "summed_backward",
    },
    "given": {
        "sum": "def summed_backward(grad_output, a):  # the course's loss, not yours\n"
        "    return (np.broadcast_to(grad_output, a.shape).copy(),)",
    },
    "tape": "autograd = Autograd()",
    "record": "autograd.add_operation([{inputs}], {out}, [{updates}], {backward})",
    "parameter": "d{name} = np.zeros_like({name})  # {name} is a parameter: its gradient goes here",
    "walk": "autograd.backward({out_grad})",
    "grad": "autograd.gradient_buffer.get_param({tensor})",
    "ledger": "buffer = autograd.gradient_buffer",
    "add": "buffer.add_spot({tensor})\nbuffer.update_param({tensor}, {grad})",
    "get": "buffer.get_param({tensor})",
}
"""How a snippet a student reads is written in this course (grader/language/tape_snippets.py):
read by the grader without running this file."""


def summed_backward(grad_output, a):
    """The gradient of a whole sum, as the course's losses give it (the grader sums every
    graph's outputs to a scalar with it): not the student's, so never graded."""
    return (np.broadcast_to(grad_output, a.shape).copy(),)


def load():
    """The student's autograd_engine and functional modules, and what each op made."""
    return types.SimpleNamespace(
        autograd=importlib.import_module("mytorch.autograd_engine"),
        functional=importlib.import_module("mytorch.functional"),
        made={},
    )


def leaf(engine, data):
    return np.array(data, dtype=np.float64)


def value(tensor):
    return tensor


def apply(engine, op, inputs, param):
    """The forward alone: the tape is the walk's (record)."""
    if op == "sum" and param is not None:
        raise ValueError("the course sums whole arrays only")
    output = np.asarray(FORWARDS[op](*inputs), dtype=np.float64)
    backward = (
        summed_backward
        if op == "sum"
        else getattr(engine.functional, f"{'matmul' if op == 'matmul_2d' else op}_backward")
    )
    engine.made[id(output)] = (backward, list(inputs))
    weakref.finalize(output, engine.made.pop, id(output), None)
    return output


def gradients(engine, tensor, out_grad):
    function, inputs = engine.made[id(tensor)]
    grads = function(out_grad, *inputs)
    return list(grads) if isinstance(grads, tuple | list) else [grads]


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

        def operation(grad_output, *arrays):
            return backward(grad_output)

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
    buffer = tape.autograd.gradient_buffer

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
    buffer = tape.autograd.gradient_buffer
    return buffer.get_param(tensor) if buffer.is_in_memory(tensor) else None
