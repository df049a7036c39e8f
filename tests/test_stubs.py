"""The generated exercises: up to date, free of solutions, importable, and all stubs raise."""

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

from grader.language import solutions
from grader.release import stubs

REPO_ROOT = Path(__file__).resolve().parent.parent
REFERENCE = REPO_ROOT / "reference"
EXERCISES = REPO_ROOT / "exercises"

STUB_FILES = [
    "micrograd/engine.py",
    "babygrad/__init__.py",
    "babygrad/tensor.py",
    "babygrad/ops.py",
]


@pytest.fixture(scope="module")
def rendered():
    return stubs.render_stubs(REFERENCE)


# ----------------------------------------------------------------------------- freshness


def test_exercises_match_the_reference(rendered):
    for relative, text in rendered.items():
        target = EXERCISES / relative
        assert target.is_file(), f"exercises/{relative} is missing: run make stubs"
        assert target.read_bytes() == text.encode("utf-8"), (
            f"exercises/{relative} is out of date: run make stubs"
        )


def test_no_stale_exercise_files(rendered):
    stale = stubs.stale_files(rendered, EXERCISES)
    assert stale == [], (
        f"exercises/ has files the reference no longer produces: {stale}; run make stubs"
    )


def test_check_mode_agrees(capsys):
    assert stubs.main(["--check"]) == 0, capsys.readouterr().err


def test_expected_files_are_generated(rendered):
    for relative in [*STUB_FILES, "README.md", "micrograd/__init__.py"]:
        assert relative in rendered
    assert "make grade" in rendered["README.md"]


def test_rendering_is_deterministic(rendered):
    assert stubs.render_stubs(REFERENCE) == rendered
    assert list(rendered) == sorted(rendered)


def test_write_stubs_into_a_fresh_directory(tmp_path, rendered):
    stale = tmp_path / "babygrad" / "old_module.py"
    stale.parent.mkdir(parents=True)
    stale.write_text("x = 1\n")
    changed = stubs.write_stubs(REFERENCE, tmp_path)
    assert not stale.exists()
    assert set(changed) == set(rendered) | {"babygrad/old_module.py"}
    for relative, text in rendered.items():
        assert (tmp_path / relative).read_text(encoding="utf-8") == text
    assert stubs.write_stubs(REFERENCE, tmp_path) == []
    assert stubs.out_of_date(REFERENCE, tmp_path) == []


# ------------------------------------------------------------------------------- no leaks


def _split_reference(source):
    """(solution lines, given lines) of a reference file, stripped, blanks dropped."""
    solution, given, inside = set(), set(), False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith(solutions.BEGIN):
            inside = True
        elif stripped == solutions.END:
            inside = False
        elif stripped:
            (solution if inside else given).add(stripped)
    return solution, given


@pytest.mark.parametrize("relative", STUB_FILES)
def test_no_solution_code_leaks(rendered, relative):
    text = rendered[relative]
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    source = (REFERENCE / relative).read_text(encoding="utf-8")
    solution, given = _split_reference(source)
    stub_lines = {line.strip() for line in text.splitlines()}
    # Lines as short as ")" or "else:" prove nothing; anything with some substance must not leak.
    substantial = {line for line in solution - given if len(line) >= 8}
    leaked = sorted(substantial & stub_lines)
    assert leaked == []


@pytest.mark.parametrize(
    ("relative", "snippet"),
    [
        ("micrograd/engine.py", "self.grad += other.data * out.grad"),
        ("micrograd/engine.py", "(1.0 - t * t) * out.grad"),
        ("micrograd/engine.py", "stack.append((child, iter(child._prev)))"),
        ("micrograd/engine.py", "node.grad = 0.0"),
        ("micrograd/engine.py", "return self * other**-1"),
        ("babygrad/tensor.py", "ledger[key]"),
        ("babygrad/tensor.py", "node._op.backward("),
        ("babygrad/ops.py", "np.argsort(self.axes)"),
        ("babygrad/ops.py", "grad.sum(axis=stretched, keepdims=True)"),
        ("babygrad/ops.py", "np.swapaxes(y, -1, -2)"),
        ("babygrad/ops.py", "np.log(x)"),
    ],
)
def test_distinctive_solution_lines_are_absent(rendered, relative, snippet):
    assert snippet in (REFERENCE / relative).read_text(encoding="utf-8")
    assert snippet not in rendered[relative]


def _functions(tree):
    """{qualified name: FunctionDef} for module-level functions and methods."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    found[f"{node.name}.{item.name}"] = item
    return found


def _raises_not_implemented(function):
    return any(
        isinstance(stmt, ast.Raise)
        and isinstance(stmt.exc, ast.Call)
        and getattr(stmt.exc.func, "id", None) == "NotImplementedError"
        for stmt in function.body
    )


@pytest.mark.parametrize("relative", STUB_FILES)
def test_every_marked_function_becomes_a_raise(rendered, relative):
    """Each function holding a solution block gets a top-level ``raise NotImplementedError``."""
    source = (REFERENCE / relative).read_text(encoding="utf-8")
    reference_functions = _functions(ast.parse(source))
    markers = [
        number
        for number, line in enumerate(source.splitlines(), start=1)
        if line.strip().startswith(solutions.BEGIN)
    ]
    owners = set()
    for number in markers:
        owner = [
            name
            for name, node in reference_functions.items()
            if node.lineno <= number <= node.end_lineno
        ]
        assert len(owner) == 1, f"{relative}:{number}: marker outside a function"
        owners.add(owner[0])
    stub_functions = _functions(ast.parse(rendered[relative]))
    assert set(stub_functions) == set(reference_functions)
    for name in sorted(owners):
        assert _raises_not_implemented(stub_functions[name]), f"{relative}: {name} does not raise"
    for name in sorted(set(stub_functions) - owners):
        assert ast.dump(stub_functions[name]) == ast.dump(reference_functions[name]), (
            f"{relative}: {name} has no solution block, so it must be copied unchanged"
        )


def test_stub_text_compiles_and_keeps_docstrings(rendered):
    for relative, text in rendered.items():
        if relative.endswith(".py"):
            compile(text, relative, "exec")
    assert "Accumulate with ``+=``" in rendered["micrograd/engine.py"]
    assert "np.argsort(axes)" in rendered["babygrad/ops.py"]  # the docstring hint stays


# ------------------------------------------------------------------- the stubs themselves


@pytest.fixture(scope="module")
def stub_engine(import_isolated):
    return import_isolated(EXERCISES, "micrograd.engine")


@pytest.fixture(scope="module")
def stub_ops(import_isolated):
    return import_isolated(EXERCISES, "babygrad.ops")


def test_stub_packages_import(import_isolated, stub_engine, stub_ops):
    assert Path(stub_engine.__file__).resolve().is_relative_to(EXERCISES.resolve())
    assert Path(stub_ops.__file__).resolve().is_relative_to(EXERCISES.resolve())
    package = import_isolated(EXERCISES, "babygrad")
    assert package.Tensor.__name__ == "Tensor"


def test_reference_and_stub_imports_do_not_mix(import_isolated, stub_engine):
    before = {key: mod for key, mod in sys.modules.items() if key.split(".")[0] == "micrograd"}
    reference_engine = import_isolated(REFERENCE, "micrograd.engine")
    after = {key: mod for key, mod in sys.modules.items() if key.split(".")[0] == "micrograd"}
    assert after == before
    assert reference_engine is not stub_engine
    assert reference_engine.Value is not stub_engine.Value
    assert Path(reference_engine.__file__).resolve().is_relative_to(REFERENCE.resolve())


def test_stub_value_infrastructure_still_works(stub_engine):
    v = stub_engine.Value(3, label="v")
    assert v.data == 3.0 and v.grad == 0.0 and v._prev == () and v.label == "v"
    assert v._backward() is None
    assert "3.0" in repr(v)


MICROGRAD_CALLS = {
    "add": lambda V: V(1.0) + V(2.0),
    "add_number": lambda V: V(1.0) + 2,
    "mul": lambda V: V(1.0) * V(2.0),
    "pow": lambda V: V(2.0) ** 2,
    "tanh": lambda V: V(0.5).tanh(),
    "exp": lambda V: V(0.5).exp(),
    "relu": lambda V: V(0.5).relu(),
    "neg": lambda V: -V(1.0),
    "sub": lambda V: V(1.0) - V(2.0),
    "truediv": lambda V: V(1.0) / V(2.0),
    "radd": lambda V: 1.0 + V(2.0),
    "rmul": lambda V: 2 * V(2.0),
    "rsub": lambda V: 1.0 - V(2.0),
    "rtruediv": lambda V: 1.0 / V(2.0),
    "backward": lambda V: V(1.0).backward(),
}


@pytest.mark.parametrize("name", list(MICROGRAD_CALLS))
def test_micrograd_stub_raises(stub_engine, name):
    with pytest.raises(NotImplementedError):
        MICROGRAD_CALLS[name](stub_engine.Value)


def test_micrograd_module_function_stubs_raise(stub_engine):
    leaf = stub_engine.Value(1.0)
    with pytest.raises(NotImplementedError):
        stub_engine.build_topo(leaf)
    with pytest.raises(NotImplementedError):
        stub_engine.zero_grad(leaf)


def _op_instances(ops):
    """Every op class with constructor arguments and forward inputs that suit it."""
    x = np.ones((2, 3), dtype=np.float32)
    y = np.ones((3, 2), dtype=np.float32)
    return [
        (ops.Add(), (x, x)),
        (ops.Mul(), (x, x)),
        (ops.Sub(), (x, x)),
        (ops.Div(), (x, x)),
        (ops.Pow(), (x, x)),
        (ops.Negate(), (x,)),
        (ops.Log(), (x,)),
        (ops.Exp(), (x,)),
        (ops.Sqrt(), (x,)),
        (ops.Abs(), (x,)),
        (ops.ReLU(), (x,)),
        (ops.Sigmoid(), (x,)),
        (ops.Tanh(), (x,)),
        (ops.Reshape((3, 2)), (x,)),
        (ops.Transpose(), (x,)),
        (ops.Transpose((1, 0)), (x,)),
        (ops.Summation(), (x,)),
        (ops.Summation((0,)), (x,)),
        (ops.BroadcastTo((4, 2, 3)), (x,)),
        (ops.MatMul(), (x, y)),
        (ops.AddScalar(1.0), (x,)),
        (ops.MulScalar(2.0), (x,)),
        (ops.DivScalar(2.0), (x,)),
        (ops.PowerScalar(2), (x,)),
    ]


OP_NAMES = [
    "Add", "Mul", "Sub", "Div", "Pow", "Negate", "Log", "Exp", "Sqrt", "Abs", "ReLU", "Sigmoid",
    "Tanh", "Reshape", "Transpose", "Transpose(axes)", "Summation", "Summation(axes)",
    "BroadcastTo", "MatMul", "AddScalar", "MulScalar", "DivScalar", "PowerScalar",
]  # fmt: skip


def test_op_list_is_complete(stub_ops):
    instances = _op_instances(stub_ops)
    assert [name.split("(")[0] for name in OP_NAMES] == [type(op).__name__ for op, _ in instances]
    listed = {type(op).__name__ for op, _ in instances}
    defined = {
        name
        for name, obj in vars(stub_ops).items()
        if isinstance(obj, type)
        and issubclass(obj, stub_ops.Function)
        and obj is not stub_ops.Function
    }
    assert listed == defined


@pytest.mark.parametrize("index", range(len(OP_NAMES)), ids=OP_NAMES)
def test_babygrad_op_stubs_raise(stub_ops, index):
    op, arrays = _op_instances(stub_ops)[index]
    Tensor = stub_ops.Tensor
    inputs = [Tensor(a) for a in arrays]
    with pytest.raises(NotImplementedError):
        op.forward(*arrays)
    with pytest.raises(NotImplementedError):
        op(*inputs)  # Function.__call__ is given and reaches the stubbed forward
    node = Tensor(np.ones((2, 2), dtype=np.float32))
    node._op, node._inputs = op, tuple(inputs)
    with pytest.raises(NotImplementedError):
        op.backward(Tensor(np.ones((2, 2), dtype=np.float32), requires_grad=False), node)


def test_babygrad_tensor_stubs(stub_ops):
    Tensor = stub_ops.Tensor
    t = Tensor([[1.0, 2.0]])
    assert t.shape == (1, 2) and t.dtype == np.float32 and t.grad is None
    with pytest.raises(NotImplementedError):
        t.backward()
    with pytest.raises(NotImplementedError):
        stub_ops.unbroadcast(np.ones((2, 3)), (3,))
    for expression in (lambda: t + t, lambda: t * 2, lambda: 3 - t, lambda: t.sum()):
        with pytest.raises(NotImplementedError):
            expression()


# --------------------------------------------------------------------- the generator itself


def test_render_source_replaces_a_block_at_its_indentation():
    source = (
        "def f(x):\n"
        '    """Doc."""\n'
        "    y = x\n"
        "    # BEGIN SOLUTION [course.ops.double; course.graphs]: double it\n"
        "    return 2 * y\n"
        "    # END SOLUTION\n"
    )
    assert solutions.render_source(source) == (
        'def f(x):\n    """Doc."""\n    y = x\n    # graded by course.ops.double\n'
        '    raise NotImplementedError("double it")\n'
    )


def test_render_source_wraps_long_instructions():
    words = "a rather long instruction that keeps going well past the line limit of the file"
    source = (
        "class A:\n"
        "    def f(self):\n"
        f'        # BEGIN SOLUTION [course.f]: {words} "q"\n'
        "        pass\n"
        "        # END SOLUTION\n"
    )
    text = solutions.render_source(source)
    assert max(len(line) for line in text.splitlines()) <= 100
    namespace = {}
    exec(compile(text, "<stub>", "exec"), namespace)
    with pytest.raises(NotImplementedError) as info:
        namespace["A"]().f()
    assert str(info.value) == f'{words} "q"'


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("# BEGIN SOLUTION [c.a]: a\nx = 1\n# BEGIN SOLUTION [c.b]: b\n# END SOLUTION\n", "nested"),
        ("# BEGIN SOLUTION [c.a]: a\nx = 1\n", "never closed"),
        ("x = 1\n# END SOLUTION\n", "without BEGIN"),
        ("# BEGIN SOLUTION [c.a]:\nx = 1\n# END SOLUTION\n", "needs an instruction"),
        ("# BEGIN SOLUTION [c.a]: a\n# END SOLUTION\n", "empty"),
        ("def f():\n    # BEGIN SOLUTION [c.a]: a\n    x = 1\n# END SOLUTION\n", "indented"),
        ("# BEGIN SOLUTION a\nx = 1\n", "malformed"),
        ("# BEGIN SOLUTION: a\nx = 1\n# END SOLUTION\n", "<source>:1: .*rubric items"),
        ("# BEGIN SOLUTION []: a\nx = 1\n# END SOLUTION\n", "names no item"),
        ("# BEGIN SOLUTION [; c.a]: a\nx = 1\n# END SOLUTION\n", "names no item"),
        ("# BEGIN SOLUTION [c.a b]: a\nx = 1\n# END SOLUTION\n", "not a rubric item id"),
    ],
)
def test_render_source_rejects_bad_markers(source, message):
    with pytest.raises(solutions.MarkerError, match=message):
        solutions.render_source(source)


def test_markers_name_items_and_may_go_on_over_comment_lines():
    source = (
        "def f(x):\n"
        "    # BEGIN SOLUTION [course.ops.a, course.ops.b; course.accumulate,\n"
        "    #   course.other]:\n"
        "    #   the instruction, on the lines\n"
        "    #   that follow\n"
        "    # a comment of the solution\n"
        "    return x\n"
        "    # END SOLUTION\n"
    )
    (block,) = solutions.solution_blocks(source)
    assert (block.start, block.body, block.end) == (2, 6, 8)
    assert block.serves == ("course.ops.a", "course.ops.b")
    assert block.also == ("course.accumulate", "course.other")
    assert block.instruction == "the instruction, on the lines that follow"
    assert solutions.render_source(source, hidden={"course.ops.b"}) == (
        "def f(x):\n    # graded by course.ops.a\n"
        '    raise NotImplementedError("the instruction, on the lines that follow")\n'
    )


def test_marker_items_must_be_in_the_rubric():
    source = (
        "def f():\n    # BEGIN SOLUTION [course.f; course.g]: a\n    pass\n    # END SOLUTION\n"
    )
    with pytest.raises(solutions.MarkerError, match=r"f\.py:2: course\.g not in the rubric"):
        solutions.render_source(source, "f.py", known={"course.f"})
    assert "course.f" in solutions.render_source(source, "f.py", known={"course.f", "course.g"})


def test_every_reference_marker_names_rubric_items():
    known, _ = stubs.rubric_items(REPO_ROOT / "rubric.yaml")
    for path in sorted(REFERENCE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        solutions.check_items(solutions.solution_blocks(source, path.name), known, path.name)
