"""The audit's mutant generator: regions and the items they serve, mutants of each region made
with cosmic-ray's operators and the project's own, do-nothing variants, and the seeded sample."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter

import pytest

from grader.audit import mutants as generator
from grader.grading import rubric as rubric_module
from tests.helpers import REPO_ROOT
from tests.helpers.planted import GROWN

pytest.importorskip("cosmic_ray")

REFERENCE = REPO_ROOT / "reference"

NOT_IN_A_REGION = {
    "babygrad.tensor_ops": "graded on the operators and methods of tensor.py, which are given",
}
"""Rubric items (but ``*.graphs`` and extra credit) that no region names, and why."""


@pytest.fixture(scope="module")
def regions():
    return generator.regions(REFERENCE)


@pytest.fixture(scope="module")
def made():
    return generator.mutants(REFERENCE), generator.do_nothing(REFERENCE)


@pytest.fixture(scope="module")
def originals():
    return {
        path.relative_to(REFERENCE).as_posix(): path.read_text(encoding="utf-8")
        for path in REFERENCE.rglob("*.py")
        if "__pycache__" not in path.parts
    }


def _region(regions, function):
    (found,) = [r for r in regions if r.function == function]
    return found


# -------------------------------------------------------------------------------- regions


@pytest.mark.parametrize(
    ("function", "serves", "also"),
    [
        ("Value.__add__", ("micrograd.ops.add",), ("micrograd.accumulate",)),
        ("Value.relu", ("micrograd.ops.relu",), ("micrograd.accumulate",)),
        ("Value.__rtruediv__", ("micrograd.sugar",), ()),
        ("Value.backward", ("micrograd.backward",), ()),
        ("build_topo", ("micrograd.topo",), ("micrograd.deep",)),
        ("zero_grad", ("micrograd.zero_grad",), ()),
        ("Add.backward", ("babygrad.ops.add",), ("babygrad.broadcasting",)),
        ("Negate.forward", ("babygrad.ops.negate",), ()),
        ("Summation.backward", ("babygrad.ops.summation",), ()),
        ("PowerScalar.backward", ("babygrad.ops.power_scalar",), ()),
        ("MatMul.backward", ("babygrad.ops.matmul",), ()),
        ("Tensor.backward", ("babygrad.backward", "babygrad.accumulate"), ()),
    ],
)
def test_regions_name_the_items_they_serve(regions, function, serves, also):
    region = _region(regions, function)
    assert (region.serves, region.also) == (serves, also)
    assert region.assignment == serves[0].split(".")[0]
    assert region.start < region.first < region.end


def test_unbroadcast_is_also_graded_by_every_op_that_calls_it(regions):
    region = _region(regions, "unbroadcast")
    assert region.serves == ("babygrad.broadcasting",)
    assert set(region.also) == {
        f"babygrad.ops.{op}" for op in ("add", "mul", "sub", "div", "pow", "broadcast_to", "matmul")
    }
    assert (region.file, region.body) == ("babygrad/ops.py", region.start + 4)


def test_every_region_names_rubric_items_and_every_item_has_a_region(regions):
    rubric = rubric_module.load(REPO_ROOT / "rubric.yaml")
    known = {item.id for item in rubric.items}
    named = {item for region in regions for item in (*region.serves, *region.also)}
    assert named <= known, named - known
    assert all(region.function for region in regions)
    graded_alone = {
        item.id
        for item in rubric.items
        if not item.id.endswith(".graphs") and not item.extra_credit
    }
    assert graded_alone - named == set(NOT_IN_A_REGION)
    assert len({(r.file, r.start) for r in regions}) == len(regions) == 62


# -------------------------------------------------------------------------------- mutants


def test_the_overwrite_mutant_of_add_exists(made):
    changed, _ = made
    (overwrite,) = [
        m
        for m in changed
        if m.region.function == "Value.__add__"
        and m.operator == "aug-assign-to-assign"
        and "self.grad" in m.description
    ]
    assert overwrite.kind == "mutant"
    assert overwrite.description.endswith("`self.grad += out.grad` -> `self.grad = out.grad`")
    assert overwrite.description.startswith(f"engine.py:{overwrite.line} Value.__add__: ")
    assert overwrite.id == f"micrograd-engine-L{overwrite.line}-aug-assign-to-assign-0"
    line = overwrite.files["micrograd/engine.py"].splitlines()[overwrite.line - 1]
    assert line.strip() == "self.grad = out.grad"


def _only_inside(mutant, original: str) -> bool:
    before = original.splitlines()
    after = mutant.files[mutant.region.file].splitlines()
    region = mutant.region
    tail = len(before) - region.end + 1
    return (
        after[: region.start] == before[: region.start]
        and after[len(after) - tail :] == before[region.end - 1 :]
    )


def test_every_mutant_compiles_and_changes_only_its_region(made, originals):
    for mutant in [*made[0], *made[1]]:
        assert list(mutant.files) == [mutant.region.file], mutant.id
        text = mutant.files[mutant.region.file]
        compile(text, mutant.id, "exec")
        assert text != originals[mutant.region.file], mutant.id
        assert _only_inside(mutant, originals[mutant.region.file]), mutant.id
        assert mutant.region.start < mutant.line < mutant.region.end, mutant.id
        assert "\n" not in mutant.description, mutant.id


def test_mutants_are_distinct_programs_with_unique_ids(made):
    changed, idle = made
    everything = [*changed, *idle]
    assert len({m.id for m in everything}) == len(everything)
    assert all(m.id.replace("-", "").replace("_", "").isalnum() for m in everything)
    assert len({m.files[m.region.file] for m in everything}) == len(everything)
    assert {m.kind for m in changed} == {"mutant"} and {m.kind for m in idle} == {"do-nothing"}


def test_mutants_are_the_same_on_every_call(tmp_path, made):
    """Made afresh (not from the cache), micrograd's mutants are the same, in the same order,
    with the same ids, as those made with babygrad's beside them."""
    shutil.copytree(
        REFERENCE / "micrograd",
        tmp_path / "micrograd",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    runs = []
    for _ in range(2):
        generator._all.cache_clear()
        runs.append(
            [
                (m.id, m.description, m.files)
                for m in [*generator.mutants(tmp_path), *generator.do_nothing(tmp_path)]
            ]
        )
    assert runs[0] == runs[1]
    assert runs[0] == [
        (m.id, m.description, m.files)
        for m in [*made[0], *made[1]]
        if m.region.file == "micrograd/engine.py"
    ]


def test_operators_have_stable_names_and_a_size_the_audit_can_grade(made):
    changed, idle = made
    names = generator.operator_names()
    assert len(names) == len(set(names))
    assert {
        "aug-assign-to-assign",
        "assign-to-aug-assign",
        "delete-statement",
        "condition-true",
        "condition-false",
        "swap-operands",
        "swap-arguments",
        "swap-receiver",
        "tuple-drop",
        "tuple-reorder",
        "drop-reversed",
        "add-reversed",
        "any-to-all",
        "all-to-any",
        *GROWN,
        "binary-add-to-sub",
        "number-plus-one",
        "condition-negate",
        "zero-iteration-loop",
    } <= set(names)
    assert {m.operator for m in changed} <= set(names)
    assert {m.operator for m in idle} <= set(generator.DO_NOTHING)
    used = Counter(m.operator for m in changed)
    assert used["aug-assign-to-assign"] == 8  # every += of micrograd's closures
    assert sum(used[name] for name in GROWN) == 47
    assert 300 <= len(changed) <= 800 and len(changed) + len(idle) <= 1000


def test_every_region_has_do_nothing_variants(regions, made):
    _, idle = made
    by_region = {(r.file, r.start): set() for r in regions}
    for mutant in idle:
        by_region[(mutant.region.file, mutant.region.start)].add(mutant.operator)
    assert all(by_region.values()), [key for key, found in by_region.items() if not found]
    assert by_region[("micrograd/engine.py", _region(regions, "Value.__mul__").start)] == {
        "do-nothing-return-none",
        "do-nothing-identity",
        "do-nothing-no-closure",
    }
    assert by_region[("babygrad/tensor.py", _region(regions, "Tensor.backward").start)] == {
        "do-nothing-pass"
    }
    assert by_region[("babygrad/ops.py", _region(regions, "Summation.forward").start)] == {
        "do-nothing-return-none",
        "do-nothing-identity",
        "do-nothing-zeros",
        "do-nothing-ones",
    }


def test_the_no_closure_variant_builds_the_node_without_its_backward(made):
    _, idle = made
    (variant,) = [
        m
        for m in idle
        if m.region.function == "Value.__add__" and m.operator == "do-nothing-no-closure"
    ]
    region = variant.region
    lines = variant.files[region.file].splitlines()[region.first - 1 :]
    body = lines[: [line.strip() for line in lines].index("# END SOLUTION")]
    text = "\n".join(line.strip() for line in body if line.strip())
    assert text == 'out = Value(self.data + other.data, (self, other), "+")\nreturn out'


def test_a_backward_that_does_nothing_returns_a_zero_gradient_per_input(tmp_path, made):
    _, idle = made
    (zeros,) = [
        m for m in idle if m.region.function == "Mul.backward" and m.operator == "do-nothing-zeros"
    ]
    root = zeros.write(REFERENCE, tmp_path / zeros.id)
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import numpy as np\n"
                "from babygrad import Tensor\n"
                "a, b = Tensor(np.ones((2, 3))), Tensor(np.ones(3))\n"
                "(a * b).sum().backward()\n"
                "print(a.grad.shape, float(abs(a.grad.data).sum()), b.grad.shape)\n"
            ),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.stdout.strip() == "(2, 3) 0.0 (3,)", run.stderr


def test_write_copies_the_reference_with_the_mutated_file(tmp_path, made, originals):
    mutant = made[0][0]
    reference = tmp_path / "reference"
    shutil.copytree(REFERENCE, reference, ignore=shutil.ignore_patterns("__pycache__"))
    (reference / "micrograd" / "__pycache__").mkdir()
    (reference / "micrograd" / "__pycache__" / "engine.cpython-311.pyc").write_bytes(b"")
    target = mutant.write(reference, tmp_path / "copy")
    assert target == tmp_path / "copy"
    written = {p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()}
    assert written == set(originals)
    for relative, text in originals.items():
        expected = mutant.files.get(relative, text)
        assert (target / relative).read_text(encoding="utf-8") == expected
    assert (reference / mutant.region.file).read_text() == originals[mutant.region.file]


# ---------------------------------------------------------------------------------- sample


def test_the_sample_is_seeded_and_spread(made):
    changed, idle = made
    first = generator.sample(changed, 40, seed=7)
    assert [m.id for m in first] == [m.id for m in generator.sample(changed, 40, seed=7)]
    assert [m.id for m in first] == [m.id for m in changed if m in first]  # in their order
    assert {m.id for m in generator.sample(changed[::-1], 40, seed=7)} == {m.id for m in first}
    assert {m.id for m in first} != {m.id for m in generator.sample(changed, 40, seed=8)}
    assert len(first) == 40
    assert len({(m.region.file, m.region.start) for m in first}) >= 35
    assert len({m.operator for m in first}) >= 20
    assert {m.region.assignment for m in first} == {"micrograd", "babygrad"}
    assert generator.sample(idle, 10**6, seed=1) == idle
    assert len({m.operator for m in generator.sample(idle, 12, seed=3)}) == 6


# ------------------------------------------------------------------------------- operators


def test_each_mutation_is_what_cosmic_rays_mutate_code_makes_of_the_function():
    """The generator applies a mutation to a copy of its node alone, not to a parse of the
    whole function made again for each mutant: the same source, for every region of this
    course's reference and of needle's (scalars and tensors), operator by operator."""
    import parso
    from cosmic_ray.ast import ast_nodes
    from cosmic_ray.mutating import mutate_code

    references = [REFERENCE, REPO_ROOT / "courses" / "needle-hw1" / "reference"]
    compared = 0
    for reference in references:
        for relative, source in generator._sources(reference):
            tree = generator.parse(source, relative)
            for region in generator._regions_of(relative, source):
                place = generator._place(region, source, tree)
                snippet = place.dedented(place.original)
                offset = place.first - 1
                expected = []
                for names, operator in generator._operators():
                    occurrence = 0
                    for node in ast_nodes(parso.parse(snippet)):
                        for index, (start, stop) in enumerate(operator.mutation_positions(node)):
                            if region.holds(start[0] + offset, stop[0] + offset):
                                mutated = mutate_code(snippet, operator, occurrence)
                                if mutated is not None and mutated != snippet:
                                    expected.append(
                                        (generator._name(names, index), place.indented(mutated))
                                    )
                            occurrence += 1
                assert list(generator._region_mutations(place)) == expected, (relative, region)
                compared += len(expected)
    assert compared > 1000


def test_the_projects_operators_rewrite_as_their_examples_say():
    from cosmic_ray.mutating import mutate_code

    from grader.audit import mutation_operators

    for name, example in mutation_operators.examples():
        operator = mutation_operators.CUSTOM[name]()
        got = mutate_code(example.pre_mutation_code, operator, example.occurrence)
        assert got == example.post_mutation_code, (name, example)


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("loop-to-condition", "for x in range(a, b):\n    pass\n"),
        ("loop-to-condition", "xs = range\n"),
        ("in-place-out", "y = np.exp(a.data, out=b)\n"),
        ("in-place-out", "def forward(self, a):\n    return np.reshape(a, (2, 3))\n"),
        ("in-place-out", "def backward(self, out_grad, node):\n    return np.exp(out_grad)\n"),
        ("in-place-out", "def forward(self, a):\n    return math.exp(a)\n"),
        ("in-place-out", "def forward(self, a):\n    return np.exp(2 * a)\n"),
        ("in-place-augment", "def forward(self, a, b):\n    return b + 1 if a else b\n"),
        ("in-place-augment", "def forward(self, a, b):\n    return 2 * a\n"),
        ("in-place-augment", "def forward(self, a, b):\n    return a - b - 1\n"),
        ("in-place-augment", "def add(a, b):\n    return a + b\n"),
        ("insert-sorted", "for i in range(n):\n    pass\n"),
        ("insert-sorted", "xs = [x for i, x in enumerate(y)]\n"),
        ("insert-sorted", "for x in sorted(y):\n    pass\n"),
        ("insert-reversed", "for x in y:\n    pass\n"),
        ("insert-reversed", "xs = [x for x, z in zip(y, w)]\n"),
        ("keep-state", "seen = set()\n"),
        ("keep-state", "def f(y):\n    seen = {x for x in y}\n"),
        ("keep-state", "def f(a, b):\n    pair = (a, b)\n"),
        ("keep-state", "def f(self):\n    self.seen = set()\n"),
        ("keep-state", "def f(y):\n    seen = set(y)\n"),
        ("slice-drop-first", "y = x[-1:]\n"),
        ("slice-drop-first", "y = x[0]\n"),
        ("slice-drop-first", "d = {k: v}\n"),
        ("slice-drop-last", "y = x[:0]\n"),
        ("slice-drop-last", "f = lambda x: x\n"),
    ],
)
def test_the_grown_operators_leave_alone_what_they_do_not_apply_to(name, source):
    """Each of issue 32's operators makes no mutant where its mistake cannot be made (its
    examples, above, show the mutant where it can)."""
    from cosmic_ray.mutating import mutate_code

    from grader.audit import mutation_operators

    assert mutate_code(source, mutation_operators.CUSTOM[name](), 0) is None


@pytest.mark.parametrize(
    ("function", "name", "mutated"),
    [
        ("unbroadcast", "loop-to-condition", "grad.sum(axis=tuple(range(min(extra, 1))))"),
        ("Add.forward", "in-place-augment", "a += b; return a"),
        ("Exp.forward", "in-place-out", "return np.exp(a, out=a)"),
        ("Abs.backward", "in-place-out", "np.sign(a.data, out=a.data)"),
        ("build_topo", "keep-state", 'globals().setdefault("_kept_visited", {id(root)})'),
        ("build_topo", "loop-to-condition", "if stack:"),
        ("Summation.backward", "insert-sorted", "for axis in sorted(summed)"),
        ("MatMul.backward", "slice-drop-last", "x[np.newaxis, :-1]"),
    ],
)
def test_the_grown_operators_make_issue_32s_mistakes_in_the_reference(
    made, function, name, mutated
):
    """Summing one prepended axis of several, writing into an input, keeping state between
    calls, an order imposed, a slice one short: each made in the reference's own code."""
    changed, _ = made
    assert any(
        m.region.function == function and m.operator == name and mutated in m.description
        for m in changed
    ), [m.description for m in changed if m.operator == name]


def test_cosmic_ray_numbers_keep_their_layout():
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.operators.provider import OperatorProvider

    from grader.audit import mutation_operators

    operator = mutation_operators.tidy(OperatorProvider()["NumberReplacer"])()
    assert mutate_code("x = y[0] * -1\n", operator, 0) == "x = y[1] * -1\n"
    assert mutate_code("x = y[0] * -1\n", operator, 3) == "x = y[0] * -0\n"


def test_the_grading_path_does_not_need_cosmic_ray():
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import sys\n"
                "import grader.audit.mutants, grader.release.stubs\n"
                "print(any(name.startswith(('cosmic_ray', 'parso')) for name in sys.modules))\n"
            ),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.stdout.strip() == "False", run.stderr
