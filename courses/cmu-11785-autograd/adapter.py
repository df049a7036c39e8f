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
    "imports": "import numpy as np\nfrom mytorch.autograd_engine import Autograd\n"
    "try:  # where your year's handout keeps the backwards\n"
    "    from mytorch import functional_hw1 as functional\n"
    "except ImportError:\n"
    "    try:\n"
    "        from mytorch import functional\n"
    "    except ImportError:\n"
    "        from mytorch.nn import functional\n"
    "def answers_bare():  # a one-input backward answers as your first right one does\n"
    "    for name, x, right in (('exp_backward', 1.0, 2.0 * np.e), ('log_backward', 4.0, 0.5)):\n"
    "        try:\n"
    "            answer = getattr(functional, name)(np.full(1, 2.0), np.full(1, x))\n"
    "            one = isinstance(answer, tuple | list)\n"
    "            if np.allclose(np.asarray(answer[0] if one else answer, dtype=float), right):\n"
    "                return not one\n"
    "        except Exception:\n"
    "            pass\n"
    "    return True\n"
    "BARE = answers_bare()",
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
        "sum": "def summed_backward(grad_output, a):  # the course's loss, not yours:\n"
        "    grad = np.broadcast_to(grad_output, a.shape).copy()\n"
        "    return grad if BARE else (grad,)",
    },
    "tape": "autograd = Autograd()\n"
    "buffer = getattr(autograd, 'gradient_buffer', None) or autograd.memory_buffer  # 2022's name",
    "record": "autograd.add_operation([{inputs}], {out}, [{updates}], {backward})",
    "parameter": "d{name} = np.zeros_like({name})  # {name} is a parameter: its gradient goes here",
    "walk": "autograd.backward({out_grad})",
    "grad": "buffer.get_param({tensor})",
    "ledger": "# the grader's walk sums into your buffer, walking nothing on the tape",
    "add": "buffer.add_spot({tensor})\nbuffer.update_param({tensor}, {grad})",
    "get": "buffer.get_param({tensor})",
    "answer": "grads[0] if BARE and len(grads) == 1 else tuple(grads)",
    "walker": "Autograd.backward",
}
"""How a snippet a student reads is written in this course (grader/language/tape_snippets.py):
read by the grader without running this file."""


def summed_backward(grad_output, a):
    """The gradient of a whole sum, as the course's losses give it (the grader sums every
    graph's outputs to a scalar with it): not the student's, so never graded."""
    return (np.broadcast_to(grad_output, a.shape).copy(),)


def _bare_summed_backward(grad_output, a):
    """summed_backward for a student whose one-input backwards answer with the array."""
    return summed_backward(grad_output, a)[0]


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
    answer, the handouts'. SNIPPETS' answers_bare says the same."""
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
    """The tape's buffer: gradient_buffer from 2023, memory_buffer in the 2022 starter."""
    return (
        autograd.gradient_buffer if hasattr(autograd, "gradient_buffer") else autograd.memory_buffer
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
        (_bare_summed_backward if engine.bare else summed_backward)
        if op == "sum"
        else getattr(engine.functional, f"{'matmul' if op == 'matmul_2d' else op}_backward")
    )
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

        def operation(grad_output, *arrays):
            grads = backward(grad_output)
            return grads[0] if tape.engine.bare and len(grads) == 1 else tuple(grads)

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
