"""Other courses' engines, graded as written: each course of ``courses/`` (a profile, a rubric
and a reference in that course's API) gives its correct engines full marks, and each planted
bug of ``tests/engines/<course>/planted.yaml`` costs exactly its own item and ``*.graphs``.

This course's profile (``courses/course/profile.yaml``) is the default; a rubric names its own.
"""

from __future__ import annotations

import csv
import shutil
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from rich.console import Console

from grader.batch import batch
from grader.batch.batch import BatchOptions
from grader.grading import rubric as rubric_module
from grader.language import profiles
from grader.language.editions import NOT_IN_EDITION, fingerprint
from grader.language.graphs import BABYGRAD_OPERATOR_FORMS, MICROGRAD_OPS
from grader.language.profiles import (
    BROADCASTING,
    FROZEN_LEAVES,
    KIND_OPS,
    KINKS,
    OPERATOR,
    ProfileError,
)
from grader.language.strategies import op_cases
from grader.layout import COURSES, DEFAULT_RUBRIC
from grader.release.stubs import write_stubs
from grader.run.api import GradeOptions
from grader.run.submissions import Upload, fingerprints, prepare, submitted
from tests.grading import ENGINES, grade_report
from tests.planted import BABYGRAD_BUGS, Bug, Edit, course_bugs, course_deviations, plant

COURSE_ENGINES = {
    "karpathy-micrograd": {
        "reference": COURSES / "karpathy-micrograd" / "reference",
        "other": ENGINES / "karpathy-micrograd" / "other",
        "lecture": ENGINES / "karpathy-micrograd" / "lecture",
        "lecture-relu": ENGINES / "karpathy-micrograd" / "lecture-relu",
        "this course's reference": COURSES.parent / "reference",
    },
    "needle-hw1": {
        "reference": COURSES / "needle-hw1" / "reference",
        "other": ENGINES / "needle-hw1" / "layout2022",
    },
    "minitorch-module1": {
        "reference": COURSES / "minitorch-module1" / "reference",
        "other": ENGINES / "minitorch-module1" / "other",
        "layout2021": ENGINES / "minitorch-module1" / "layout2021",
        "layout2020": ENGINES / "minitorch-module1" / "layout2020",
    },
    "babygrad-book": {
        "reference": COURSES / "babygrad-book" / "reference",
        "other": ENGINES / "babygrad-book" / "author",
    },
    "tinytorch-autograd": {
        "reference": COURSES / "tinytorch-autograd" / "reference",
        "backward-reduces": ENGINES / "tinytorch-autograd" / "backward-reduces",
    },
    "cmu-11785-autograd": {
        "reference": COURSES / "cmu-11785-autograd" / "reference",
        "other": ENGINES / "cmu-11785-autograd" / "other",
        "hw1-layout": ENGINES / "cmu-11785-autograd" / "hw1-layout",
    },
}
"""Each course's correct engines: its reference and one written differently (``other``)."""
SLOT = 240
"""Sandbox slots of this module's batch run, apart from every other test's."""


def course_grade(course: str, submission: Path, **options):
    return grade_report(
        submission,
        rubric=COURSES / course / "rubric.yaml",
        reference=COURSES / course / "reference",
        **options,
    )


def bugs_of(course: str) -> tuple[Bug, ...]:
    return course_bugs(ENGINES / course / "planted.yaml")


def deviations_of(course: str) -> tuple[Bug, ...]:
    """The course's correct engines that deviate within its contract (``conforming.yaml``),
    each with the item it would lose outside the contract."""
    catalogue = ENGINES / course / "conforming.yaml"
    return course_deviations(catalogue) if catalogue.exists() else ()


DEVIATIONS = [(course, d) for course in COURSE_ENGINES for d in deviations_of(course)]


def test_this_course_names_its_own_profile_and_has_every_op_of_its_columns():
    rubric = rubric_module.load(DEFAULT_RUBRIC)
    assert rubric.profile == profiles.course()
    own = {"scalar": MICROGRAD_OPS, "tensor": BABYGRAD_OPERATOR_FORMS}
    for api in rubric.profile.assignments.values():
        assert set(api.ops) == set(own[api.kind])
        assert set(api.ops) <= set(KIND_OPS[api.kind])


def test_the_books_profile_leaves_open_what_the_book_does_not_specify():
    book = profiles.load(COURSES / "babygrad-book" / "profile.yaml").of("babygrad")
    own = profiles.course().of("babygrad")
    for need in (FROZEN_LEAVES, KINKS, BROADCASTING, OPERATOR + "log", "sum", "matmul", "rsub"):
        assert own.has(need) and not book.has(need), need
    for need in (OPERATOR + "mul", OPERATOR + "sum_tuple", OPERATOR + "radd", "relu"):
        assert book.has(need), need


@settings(max_examples=60, database=None, deadline=None)
@given(op_cases("tensor", "sum_tuple"), op_cases("tensor", "matmul_2d"))
def test_the_books_summation_and_matmul_are_drawn_inside_its_contract(sums, products):
    axes = sums[0].nodes[0].param
    assert axes is None or (isinstance(axes, tuple) and min(axes) >= 0)
    assert [leaf.ndim for leaf in products[0].leaves] == [2, 2]


def test_a_profile_error_names_its_file_and_line(tmp_path):
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        "profile: mine\ntitle: mine\nassignments:\n  micrograd:\n    kind: scalar\n"
        "    walk: {topo: nested, zero_grad: absent}\n    ops: [add, matmul]\n"
    )
    with pytest.raises(ProfileError, match=r"profile.yaml:7: assignments/micrograd/ops: matmul"):
        profiles.load(profile)
    profile.write_text(profile.read_text().replace("nested", "inside"))
    with pytest.raises(ProfileError, match=r"profile.yaml:6: assignments/micrograd/walk/topo"):
        profiles.load(profile)
    book = (COURSES / "babygrad-book" / "profile.yaml").read_text()
    profile.write_text(book.replace("broadcasts: false", "broadcasts: sometimes"))
    line = book[: book.index("broadcasts:")].count("\n") + 1
    with pytest.raises(
        ProfileError, match=rf"profile.yaml:{line}: assignments/babygrad/api/broadcasts"
    ):
        profiles.load(profile)
    line = book[: book.index("aliases:")].count("\n") + 1
    for aliases in ("[baby-grad]", "[baby, baby]", "[]", "baby", "[baby, babygrad]"):
        profile.write_text(book.replace("aliases: [baby]", f"aliases: {aliases}"))
        with pytest.raises(
            ProfileError, match=rf"profile.yaml:{line}: assignments/babygrad/api/aliases"
        ):
            profiles.load(profile)
    minitorch = (COURSES / "minitorch-module1" / "profile.yaml").read_text()
    profile.write_text(minitorch.replace("central_difference: scalar.", "difference: scalar."))
    line = minitorch[: minitorch.index("central_difference: scalar.")].count("\n") + 1
    with pytest.raises(
        ProfileError,
        match=rf"profile.yaml:{line}: assignments/minitorch/editions/2021/api: difference",
    ):
        profiles.load(profile)
    # an edition that drops a part of the walk says why in the course's words
    start = minitorch.index("          quote: ", minitorch.index('"2020"'))
    end = minitorch.index("          source: ", start)
    profile.write_text(minitorch[:start] + minitorch[end:])
    line = minitorch[: minitorch.index("          topo: nested")].count("\n") + 1  # the walk block
    with pytest.raises(
        ProfileError,
        match=rf"profile.yaml:{line}: assignments/minitorch/editions/2020/walk: 'quote' is a",
    ):
        profiles.load(profile)


def test_a_rubric_grades_only_assignments_its_profile_describes(tmp_path):
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(
        (COURSES / "karpathy-micrograd" / "rubric.yaml")
        .read_text()
        .replace("  micrograd:\n    title", "  babygrad:\n    title", 1)
    )
    with pytest.raises(rubric_module.RubricError, match="'babygrad' is not in the profile"):
        rubric_module.load(rubric)


@pytest.mark.parametrize(
    ("course", "engine"),
    [(course, engine) for course, engines in COURSE_ENGINES.items() for engine in engines],
)
def test_a_correct_engine_gets_full_marks(course, engine):
    report = course_grade(course, COURSE_ENGINES[course][engine])
    lost = {i["id"]: i["reason"] for i in report.items if i["score"] < i["max_score"]}
    assert lost == {}
    rubric = rubric_module.load(COURSES / course / "rubric.yaml")
    not_in_edition = {i["id"] for i in report.items if i["status"] == NOT_IN_EDITION}
    assert (
        report.score
        == report.max_score
        == sum(i.points for i in rubric.items if i.id not in not_in_edition)
    )


def test_an_op_the_uploads_edition_lacks_is_neither_graded_nor_counted():
    """needle's 2022 homework has no EWisePow: its layout (needle/ops.py) tells it apart, and
    ops.power is reported as not in that edition, 0 of 0 points; the 2023 layout grades it."""
    items = {
        engine: {i["id"]: i for i in course_grade("needle-hw1", path).items}
        for engine, path in COURSE_ENGINES["needle-hw1"].items()
    }
    power = items["other"]["needle.ops.power"]
    assert (power["status"], power["score"], power["max_score"]) == (NOT_IN_EDITION, 0, 0)
    assert "not part of the 2022 homework" in power["feedback"]
    assert [i for i, item in items["other"].items() if item["status"] == NOT_IN_EDITION] == [
        "needle.ops.power"
    ]
    assert items["reference"]["needle.ops.power"]["status"] == "passed"


GIVEN = course_deviations(ENGINES / "needle-hw1" / "given.yaml")
"""needle engines that leave a class of the starter's as it is given (``given.yaml``)."""
STARTERS_POW = "pow: [6a230c7e19a724ae]"
"""The 2023 edition's fingerprint of its starter's EWisePow, as the shipped profile writes it."""


@pytest.mark.slow
@pytest.mark.parametrize("engine", GIVEN, ids=lambda v: v.name)
def test_a_class_left_as_the_starter_gives_it_is_neither_graded_nor_drawn(tmp_path, engine):
    """Graded with a copy of needle's profile told this engine's EWisePow is the starter's
    (its fingerprint beside the starter's own): full marks, ops.power 0 of 0 "given by the
    course" and never drawn in needle.graphs; with the shipped profile the same class is the
    student's, and costs ops.power and graphs."""
    submission = plant(tmp_path, *engine.edits, reference=COURSES / "needle-hw1" / "reference")
    source = (submission / engine.edits[0].file).read_text()
    course = tmp_path / "needle-hw1"
    course.mkdir()
    shutil.copy(COURSES / "needle-hw1" / "rubric.yaml", course)
    profile = (COURSES / "needle-hw1" / "profile.yaml").read_text()
    assert profile.count(STARTERS_POW) == 1
    told = STARTERS_POW.replace("]", f", {fingerprint(source, 'EWisePow')}]")
    (course / "profile.yaml").write_text(profile.replace(STARTERS_POW, told))
    report = grade_report(
        submission, rubric=course / "rubric.yaml", reference=COURSES / "needle-hw1" / "reference"
    )
    items = {i["id"]: i for i in report.items}
    power = items["needle.ops.power"]
    assert (power["status"], power["score"], power["max_score"]) == (NOT_IN_EDITION, 0, 0)
    assert power["feedback"].startswith("given by the course: ")
    assert report.score == report.max_score
    shipped = course_grade("needle-hw1", submission)
    lost = {i["id"] for i in shipped.items if i["score"] < i["max_score"]}
    assert lost == {"needle.ops.power", "needle.graphs"}


HW1_GIVEN = "given: {add: [ab50a8e748f1bf7f], ledger: [9f58ac9c0bccb3f1]}"
"""11-785's 2024 HW1 edition's given code (add_backward, the GradientBuffer), as the shipped
profile writes it."""
HW1_FUNCTIONS = {"add": "add_backward", "sub": "sub_backward", "mul": "mul_backward",
                 "div": "div_backward", "matmul_2d": "matmul_backward", "log": "log_backward",
                 "exp": "exp_backward"}  # fmt: skip


@pytest.mark.slow
def test_a_ledger_and_every_op_left_as_given_leave_the_tape_alone_graded(tmp_path):
    """11-785's HW3P1 gives the buffer and every backward: told the hw1-layout engine's own
    GradientBuffer and backwards are its edition's starter's, a copy of the profile grades its
    tape alone (30 of 30): the buffer and every op "given by the course", whole graphs not in
    the edition (no op of the student's left to draw)."""
    engine = COURSE_ENGINES["cmu-11785-autograd"]["hw1-layout"] / "mytorch"
    functional = (engine / "functional_hw1.py").read_text()
    prints = {op: fingerprint(functional, name) for op, name in HW1_FUNCTIONS.items()}
    prints["ledger"] = fingerprint((engine / "utils.py").read_text(), "GradientBuffer")
    course = tmp_path / "cmu-11785-autograd"
    shutil.copytree(
        COURSES / "cmu-11785-autograd", course, ignore=shutil.ignore_patterns("reference")
    )
    profile = (course / "profile.yaml").read_text()
    assert profile.count(HW1_GIVEN) == 1
    told = ", ".join(f"{part}: [{print_}]" for part, print_ in prints.items())
    (course / "profile.yaml").write_text(profile.replace(HW1_GIVEN, f"given: {{{told}}}"))
    report = grade_report(
        engine.parent,
        rubric=course / "rubric.yaml",
        reference=COURSES / "cmu-11785-autograd" / "reference",
    )
    items = {i["id"]: i for i in report.items}
    graded = [i for i, item in items.items() if item["status"] != NOT_IN_EDITION]
    assert graded == ["mytorch.backward"]
    assert items["mytorch.buffer"]["feedback"].startswith("given by the course: ")
    assert items["mytorch.graphs"]["feedback"].startswith("not in this edition: ")
    assert report.score == report.max_score == 30


def test_the_2022_starters_layout_is_graded_as_2022(tmp_path):
    """11-785's 2022 starter keeps the backwards in mytorch/nn/functional.py and its buffer in
    Autograd.memory_buffer (a MemoryBuffer): the hw1-layout engine moved there and so renamed
    is found, detected as 2022 (no tanh, sigmoid nor broadcasting asked) and gets full marks."""
    engine = shutil.copytree(COURSE_ENGINES["cmu-11785-autograd"]["hw1-layout"], tmp_path / "e")
    package = engine / "mytorch"
    (package / "nn").mkdir()
    (package / "nn" / "__init__.py").write_text("")
    (package / "functional_hw1.py").rename(package / "nn" / "functional.py")
    for name in ("autograd_engine.py", "utils.py"):
        source = (package / name).read_text()
        renamed = source.replace("gradient_buffer", "memory_buffer")
        (package / name).write_text(renamed.replace("GradientBuffer", "MemoryBuffer"))
    report = course_grade("cmu-11785-autograd", engine)
    lacking = {i["id"] for i in report.items if i["status"] == NOT_IN_EDITION}
    assert lacking == {
        f"mytorch.{i}" for i in ("tanh_backward", "sigmoid_backward", "broadcasting")
    }
    assert report.score == report.max_score == 89


LAYOUT_2021_EDITS = {
    # right: the walk asks the function's chain_rule itself, as History.backprop_step does
    "node.history.backprop_step(d)": (
        "node.history.last_fn.chain_rule(node.history.ctx, node.history.inputs, d)",
        set(),
    ),
    # backpropagate keeps the last share a variable is handed, not their sum
    "gathered.get(x.unique_id, 0.0) + share": ("share", {"accumulate", "graphs"}),
    # FunctionBase.chain_rule pairs each input with another's derivative (History.backprop_step)
    "zip(inputs, shares, strict=True)": (
        "zip(inputs[::-1], shares, strict=True)",
        {"backward", "graphs"},
    ),
}


@pytest.mark.parametrize("code", LAYOUT_2021_EDITS)
def test_minitorchs_2021_layout_is_graded_on_its_own_walk(tmp_path, code):
    """MiniTorch's 2021 starter keeps the ScalarFunctions and central_difference in scalar.py
    and its chain rule in History.backprop_step (no scalar_functions.py, no parents): its
    layout is graded as the 2021 edition (full marks: test_a_correct_engine_gets_full_marks),
    a walk that asks the function's chain_rule without the history's step too, and its walk
    and chain rule still answer for themselves."""
    engine = shutil.copytree(COURSE_ENGINES["minitorch-module1"]["layout2021"], tmp_path / "e")
    autodiff = engine / "minitorch" / "autodiff.py"
    edited, lost = LAYOUT_2021_EDITS[code]
    assert code in autodiff.read_text()
    autodiff.write_text(autodiff.read_text().replace(code, edited))
    report = course_grade("minitorch-module1", engine)
    assert {i["id"] for i in report.items if i["score"] < i["max_score"]} == {
        f"minitorch.{item}" for item in lost
    }


LAYOUT_2020_EDITS = {
    # right: a queue that hands a variable its share from each path in turn, never adding
    # them (the chain rule is linear), as most 2020 students wrote it
    "entry = waiting.get(found.variable.name)": ("entry = None", set()),
    # the merge keeps the last share handed to a variable waiting in the queue, not their sum
    "entry.deriv = entry.deriv + found.deriv": ("entry.deriv = found.deriv", {"accumulate"}),
    # FunctionBase.chain_rule pairs each input with another's derivative
    "zip(inputs, shares, strict=True)": ("zip(inputs[::-1], shares, strict=True)", {"backward"}),
}


@pytest.mark.parametrize("code", LAYOUT_2020_EDITS)
def test_minitorchs_2020_layout_is_graded_on_its_own_walk(tmp_path, code):
    """MiniTorch's 2020 starter has no topological_sort, no EQ nor __rtruediv__, and its walk
    speaks in VariableWithDeriv (backpropagate starts from one, a chain rule answers them):
    graded as the 2020 edition (full marks: test_a_correct_engine_gets_full_marks), topo
    and EQ not in it, topo's absence said in the course's words; a walk that hands a shared
    variable its shares one path at a time is right, and the walk's and chain rule's bugs
    still cost their own item and the whole graphs."""
    engine = shutil.copytree(COURSE_ENGINES["minitorch-module1"]["layout2020"], tmp_path / "e")
    autodiff = engine / "minitorch" / "autodiff.py"
    edited, lost = LAYOUT_2020_EDITS[code]
    assert autodiff.read_text().count(code) == 1
    autodiff.write_text(autodiff.read_text().replace(code, edited))
    report = course_grade("minitorch-module1", engine)
    items = {i["id"]: i for i in report.items}
    assert {i for i, item in items.items() if item["status"] == NOT_IN_EDITION} == {
        "minitorch.topo",
        "minitorch.ops.eq",
    }
    topo = items["minitorch.topo"]["feedback"]
    assert '"Runs a breadth-first search on the computation graph' in topo
    assert {i for i, item in items.items() if item["score"] < item["max_score"]} == {
        f"minitorch.{item}" for item in (lost and {*lost, "graphs"})
    }


def test_minitorchs_2020_starters_lt_left_as_given_is_the_courses(tmp_path):
    """The 2020 starter gives LT whole (5c005d0's backward answers one 0.0 for its two
    inputs): told the layout2020 engine's LT is the starter's, a copy of the profile reports
    ops.lt "given by the course", 0 of 0; the shipped profile grades the same class."""
    engine = COURSE_ENGINES["minitorch-module1"]["layout2020"]
    lt = fingerprint((engine / "minitorch" / "scalar.py").read_text(), "LT")
    course = tmp_path / "minitorch-module1"
    shutil.copytree(
        COURSES / "minitorch-module1", course, ignore=shutil.ignore_patterns("reference")
    )
    profile = (course / "profile.yaml").read_text()
    starters = "given: {lt: [eebc09bae19aef8d, e66bea187cb4cf00]}"
    assert profile.count(starters) == 1
    (course / "profile.yaml").write_text(profile.replace(starters, f"given: {{lt: [{lt}]}}"))
    report = grade_report(
        engine,
        rubric=course / "rubric.yaml",
        reference=COURSES / "minitorch-module1" / "reference",
        only=["minitorch.ops.lt", "minitorch.ops.add"],
    )
    items = {i["id"]: i for i in report.items}
    lt_item = items["minitorch.ops.lt"]
    assert (lt_item["status"], lt_item["max_score"]) == (NOT_IN_EDITION, 0)
    assert lt_item["feedback"].startswith("given by the course: ")
    assert items["minitorch.ops.add"]["status"] == "passed"


@pytest.mark.parametrize(("course", "engine"), DEVIATIONS, ids=lambda v: getattr(v, "name", v))
def test_a_correct_engine_within_its_courses_contract_gets_full_marks(tmp_path, course, engine):
    submission = plant(tmp_path, *engine.edits, reference=COURSES / course / "reference")
    report = course_grade(course, submission)
    lost = {i["id"]: i["reason"] for i in report.items if i["score"] < i["max_score"]}
    assert lost == {}


CONTRACT_KEYS = ("domain", "definitions")
"""The profile keys that state a course's contract (its editions are proven apart)."""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("course", "engine"),
    [(c, d) for c, d in DEVIATIONS if d.item],
    ids=lambda v: getattr(v, "name", v),
)
def test_without_its_contract_the_same_engine_would_lose_its_item(tmp_path, course, engine):
    """What the contract saves (and proof the test above can fail): the course's profile with
    no contract stated draws outside it, or compares with the exact op, and the engine loses."""
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        "".join(
            line
            for line in (COURSES / course / "profile.yaml").read_text().splitlines(keepends=True)
            if not line.lstrip().startswith(tuple(f"{key}:" for key in CONTRACT_KEYS))
        )
    )
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(
        (COURSES / course / "rubric.yaml")
        .read_text()
        .replace(f"profile: {course}", "profile: profile.yaml", 1)
    )
    submission = plant(tmp_path, *engine.edits, reference=COURSES / course / "reference")
    report = grade_report(submission, rubric=rubric, reference=COURSES / course / "reference")
    lost = {i["id"] for i in report.items if i["score"] < i["max_score"]}
    assert engine.item in lost


@pytest.mark.parametrize("course", COURSE_ENGINES)
def test_every_item_but_graphs_has_a_planted_bug(course):
    rubric = rubric_module.load(COURSES / course / "rubric.yaml")
    graded = {item.id for item in rubric.items if not item.id.endswith(".graphs")}
    assert {bug.item for bug in bugs_of(course)} == graded


@pytest.mark.slow
@pytest.mark.parametrize(
    ("course", "bug"),
    [(course, bug) for course in COURSE_ENGINES for bug in bugs_of(course)],
    ids=lambda value: getattr(value, "label", value),
)
def test_a_planted_bug_costs_its_own_item_and_graphs_only(tmp_path, course, bug):
    submission = plant(tmp_path, bug, reference=COURSES / course / "reference")
    report = course_grade(course, submission)
    lost = {i["id"] for i in report.items if i["score"] < i["max_score"]}
    assert bug.item in lost
    assert lost <= {bug.item, f"{bug.item.split('.')[0]}.graphs"}


BOOK_CONVENTIONS = Edit(
    "babygrad/tensor.py",
    'def __init__(self, data, requires_grad=True, dtype="float32"):',
    'def __init__(self, data, *, device=None, dtype="float32", requires_grad=False):',
)
"""The babygrad book's own Tensor: keyword-only arguments, a ``device``, and ``requires_grad``
off unless asked for. The grader passes every argument it relies on, so none of it costs."""


def test_the_babygrad_books_conventions_cost_nothing(tmp_path):
    report = grade_report(plant(tmp_path, BOOK_CONVENTIONS), assignment="babygrad")
    lost = {i["id"]: i["reason"] for i in report.items if i["score"] < i["max_score"]}
    assert lost == {}


@pytest.mark.slow
def test_the_babygrad_books_conventions_are_graded_on_their_real_bugs(tmp_path):
    bug = next(b for b in BABYGRAD_BUGS if b.item == "babygrad.broadcasting")
    report = grade_report(plant(tmp_path, BOOK_CONVENTIONS, bug), assignment="babygrad")
    lost = {i["id"] for i in report.items if i["score"] < i["max_score"]}
    assert "babygrad.broadcasting" in lost
    assert lost <= {"babygrad.broadcasting", "babygrad.graphs"}


TINYTORCH_FREED_GRAPH = Edit(
    "tinytorch/core/autograd.py",
    "                tensor.backward(grad)\n",
    "                tensor.backward(grad)\n        self._grad_fn = None  # retain_graph=False\n",
)
"""TinyTorch's given ``Tensor.backward`` as the official code has it: the graph is freed after
the first path through a tensor, so a tensor used twice loses every later path (``y + y + y``
gives 2 instead of 6). The course gives it: it costs no student anything."""


def test_the_walk_tinytorch_gives_is_not_the_students_to_answer_for(tmp_path):
    report = course_grade(
        "tinytorch-autograd",
        plant(
            tmp_path, TINYTORCH_FREED_GRAPH, reference=COURSES / "tinytorch-autograd" / "reference"
        ),
    )
    assert report.score == report.max_score


def test_the_course_top_init_that_imports_unexported_modules_costs_nothing(tmp_path):
    """TinyTorch's repository ships ``tinytorch/__init__.py`` importing every module of the
    course: at module 05 it fails (no optimizers yet), and so did every item. The profile says
    the package has none (``init: false``): the grader imports it as that namespace package."""
    engine = tmp_path / "engine"
    shutil.copytree(COURSES / "tinytorch-autograd" / "reference", engine)
    shutil.copy(
        ENGINES / "tinytorch-autograd" / "course-init" / "tinytorch" / "__init__.py",
        engine / "tinytorch" / "__init__.py",
    )
    report = course_grade("tinytorch-autograd", engine)
    assert report.score == report.max_score


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 6))
def test_tinytorchs_reference_keeps_full_marks_over_seeds(seed):
    report = course_grade(
        "tinytorch-autograd", COURSE_ENGINES["tinytorch-autograd"]["reference"], seed=seed
    )
    assert report.score == report.max_score


def test_a_package_is_imported_by_its_apis_name_whatever_its_assignment_is_called(tmp_path):
    """A profile whose package is ``baby`` (no other name) grades it there."""
    book = COURSES / "babygrad-book"
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        (book / "profile.yaml")
        .read_text()
        .replace("package: babygrad", "package: baby")
        .replace("aliases: [baby]", "aliases: [babygrad]")
    )
    rubric = tmp_path / "rubric.yaml"
    named = (book / "rubric.yaml").read_text()
    rubric.write_text(named.replace("profile: babygrad-book", "profile: profile.yaml"))
    shutil.copytree(book / "reference" / "babygrad", tmp_path / "submission" / "baby")
    report = grade_report(
        tmp_path / "submission", rubric=rubric, reference=None, only=["babygrad.ops.mul"]
    )
    assert [(i["id"], i["score"]) for i in report.items if i["max_score"]] == [
        ("babygrad.ops.mul", 3)
    ]


BOOK_AUTHOR = ENGINES / "babygrad-book" / "author"
"""The book's engine as its author writes his own: the package is ``baby``, imported by that
name in its own modules (``from baby.tensor import Tensor``), so it cannot be renamed."""


def test_the_books_package_may_have_the_name_its_author_gives_it(tmp_path):
    """``aliases: [baby]``: an upload holding ``baby/`` is found, placed under that name and
    graded; snippets import it as it is called, and the reference stays ``babygrad``."""
    book = profiles.load(COURSES / "babygrad-book" / "profile.yaml")
    api = book.of("babygrad").api
    assert api.names == ("babygrad", "baby")
    assert api.looked_for.startswith("a babygrad/ or baby/ folder with")
    author = book.as_uploaded(BOOK_AUTHOR).of("babygrad").api
    assert author.package == "baby"
    assert author.imports == "from baby import Tensor\nfrom baby import ops"
    reference = book.named_in(COURSES / "babygrad-book" / "reference")
    assert reference.of("babygrad").api.package == "babygrad"
    assert book.as_uploaded(BOOK_AUTHOR).editions == " babygrad:baby"
    upload = tmp_path / "upload" / "babygrad-main"
    shutil.copytree(BOOK_AUTHOR, upload)
    folder = tmp_path / "prepared"
    prepared = prepare(Upload("zek", upload.parent, "folder"), folder, book.graded)
    assert "babygrad: babygrad-main/baby/" in prepared.notes
    assert sorted(p.name for p in (folder / "baby").glob("*.py")) == [
        "__init__.py",
        "ops.py",
        "tensor.py",
    ]
    (assignment,) = book.graded
    assert submitted(folder, assignment)
    assert fingerprints(folder, book.graded)["babygrad"] is not None
    report = course_grade("babygrad-book", folder, only=["babygrad.ops.mul", "babygrad.backward"])
    assert report.not_submitted == {}
    assert {i["id"]: i["score"] == i["max_score"] for i in report.items} == {
        "babygrad.ops.mul": True,
        "babygrad.backward": True,
    }


def test_a_bug_in_the_authors_package_is_shown_in_its_own_name(tmp_path):
    """The snippet a student runs imports the package by the name it has: ``baby``."""
    shutil.copytree(BOOK_AUTHOR, tmp_path / "submission")
    ops = tmp_path / "submission" / "baby" / "ops.py"
    source = ops.read_text()
    right = "return multiply(out_grad, b), multiply(out_grad, a)"
    assert source.count(right) == 1
    ops.write_text(source.replace(right, "return multiply(out_grad, b), b"))
    report = course_grade("babygrad-book", tmp_path / "submission", only=["babygrad.ops.mul"])
    (mul,) = (i for i in report.items if i["id"] == "babygrad.ops.mul")
    assert mul["score"] < mul["max_score"]
    assert "from baby import" in mul["feedback"]
    assert "babygrad" not in mul["feedback"].replace("babygrad.ops.mul", "")


def test_an_engine_that_runs_a_demo_at_import_is_told_once_with_the_fix(tmp_path):
    submission = plant(
        tmp_path,
        Edit(
            "micrograd/engine.py", "\n\nclass Value:", "\n\nwhile True:\n    pass\n\n\nclass Value:"
        ),
        reference=COURSES / "karpathy-micrograd" / "reference",
    )
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(
        (COURSES / "karpathy-micrograd" / "rubric.yaml")
        .read_text()
        .replace("import_budget: 30", "import_budget: 0.5")
    )
    report = grade_report(submission, rubric=rubric, reference=None)
    line = report.not_importable["micrograd"]
    assert "timed out after 0.5 s" in line
    assert 'if __name__ == "__main__":' in line
    assert report.absent("micrograd") == f"micrograd: {line}"
    assert report.failures == []
    assert {i["feedback"] for i in report.items} == {line}
    assert report.score == 0


@pytest.mark.parametrize("course", COURSE_ENGINES)
def test_a_courses_unfinished_starter_earns_nothing(tmp_path, course):
    starter = tmp_path / "starter"
    write_stubs(COURSES / course / "reference", starter, None)
    report = course_grade(course, starter)
    assert report.score == 0


@pytest.mark.slow
def test_a_class_of_another_course_is_batch_graded_as_uploaded(tmp_path):
    """needle homeworks as students upload them: the 2023 layout as a folder, the 2022 layout
    zipped from its root, and one with a bug; each package is found where it sits."""
    uploads, needle = tmp_path / "uploads", COURSES / "needle-hw1"
    shutil.copytree(needle / "reference", uploads / "alice" / "hw1")
    other = ENGINES / "needle-hw1" / "layout2022"
    with zipfile.ZipFile(uploads / "bob.zip", "w") as archive:
        for path in sorted(other.rglob("*.py")):
            archive.write(path, path.relative_to(other).as_posix())
    bug = next(b for b in bugs_of("needle-hw1") if b.name == "one-adjoint-for-two-inputs")
    shutil.copytree(
        plant(tmp_path / "carol", bug, reference=needle / "reference"), uploads / "carol"
    )
    grading = GradeOptions(
        Path(), rubric=needle / "rubric.yaml", reference=needle / "reference", slot=SLOT
    )
    outcome = batch.run(
        BatchOptions(uploads, tmp_path / "out", grading, jobs=2), Console(quiet=True)
    )
    assert outcome.graded == 3 and outcome.failed == 0
    with (tmp_path / "out" / "grades.csv").open(newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert {student: row["total"] for student, row in rows.items()} == {
        "alice": "100",
        "bob": "96",  # 2022: no EWisePow, ops.power out of the total
        "carol": "85",
    }
    assert rows["carol"]["needle.ops.add"] == "0" and rows["carol"]["needle.graphs"] == "0"
    assert (rows["bob"]["max"], rows["bob"]["needle.ops.power"]) == ("96", "")
    assert "needle: hw1/python/needle/" in rows["alice"]["notes"]
