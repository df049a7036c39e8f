"""A course adapter's walk hooks (``grader.language.adapters.WALK_HOOKS``): CMU 11-785's tape
recorded and walked through the protocol, in process, and the profiles refused at load
because their adapter cannot run the walk they ask to grade. The grades (the reference's
full marks, the starter's 0, each planted bug's own item) are in ``tests/test_courses.py``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from grader.language import profiles
from grader.language.adapters import load_adapter
from grader.language.graphs import Graph, Node
from grader.language.profiles import ProfileError
from grader.layout import COURSES
from grader.worker.engines import isolated
from grader.worker.probes.walks import probe_tensor_backward
from grader.worker.shapes import Adapted
from tests.grading import grade_report
from tests.planted import Edit, course_bugs, plant
from tests.test_course_snippets import as_a_student

CMU = COURSES / "cmu-11785-autograd"
TINYTORCH = COURSES / "tinytorch-autograd"
PLANTED = COURSES.parent / "tests" / "engines" / "cmu-11785-autograd" / "planted.yaml"


@contextmanager
def mytorch(reference: Path = CMU / "reference") -> Iterator[SimpleNamespace]:
    api = profiles.load(CMU / "profile.yaml").of("mytorch").api
    adapter = load_adapter(api.adapter_source, "mytorch", api.snippets)
    with isolated(reference, "mytorch"):
        yield SimpleNamespace(adapter=adapter, engine=adapter.load())


def test_a_graph_is_recorded_on_the_students_tape_and_walked_by_it():
    """(a * b) + a, summed: the tape's walk gives a b + 1 and b a; a is the first leaf (the
    buffer's), b the second (a parameter: gradients_to_update)."""
    graph = Graph(
        "tensor",
        ((2.0, 3.0), (5.0, 7.0)),
        (Node("mul", (0, 1)), Node("add", (2, 0)), Node("sum", (3,))),
    )
    with mytorch() as engine:
        shape = Adapted(engine)
        nodes = shape.build(graph)
        shape.walk(nodes[-1])
        assert np.array_equal(shape.grad(nodes[0]), [6.0, 8.0])
        assert np.array_equal(shape.grad(nodes[1]), [2.0, 3.0])
        assert id(nodes[1]) in shape.tape.params  # routed through gradients_to_update


def test_the_walk_items_run_the_students_tape_over_the_graders_ops():
    """n2 = n0 + 2 n1 and n3 = 3 n2 + n0: the tape calls each stand-in once, newest first."""
    case = {"dag": {"leaves": 2, "nodes": [[[0, 1.0], [1, 2.0]], [[2, 3.0], [0, 1.0]]]}}
    with mytorch() as engine:
        answer = probe_tensor_backward(engine, {**case, "shape": [2]})
    assert answer["calls"] == [3, 2]
    grads = [np.asarray(g["data"], dtype=float) for g in answer["grads"]]
    assert [g.tolist() for g in grads] == [[4.0, 4.0], [6.0, 6.0], [3.0, 3.0], [1.0, 1.0]]


def test_the_buffers_item_sums_into_the_students_buffer_with_the_graders_walk(tmp_path):
    """A tape walked forwards raises (the root's output has no buffer entry): the buffer's
    item, graded with the grader's walk, never runs it."""
    engine_copy = tmp_path / "engine"
    shutil.copytree(CMU / "reference", engine_copy)
    tape = engine_copy / "mytorch" / "autograd_engine.py"
    tape.write_text(
        tape.read_text().replace("reversed(self.operation_list)", "self.operation_list")
    )
    case = {"dag": {"leaves": 1, "nodes": [[[0, 1.0], [0, 2.0]]]}, "shape": [2]}
    with mytorch(engine_copy) as engine:
        with pytest.raises(KeyError):
            probe_tensor_backward(engine, {**case, "wrap_leaves": True})
        answer = probe_tensor_backward(engine, {**case, "wrap_leaves": True, "ledger": True})
    assert np.asarray(answer["grads"][0]["data"]).tolist() == [3.0, 3.0]


def _copy(course: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "course"
    shutil.copytree(course, folder, ignore=shutil.ignore_patterns("reference"))
    return folder / "profile.yaml"


def test_an_adapter_without_the_walk_hooks_cannot_grade_a_walk(tmp_path):
    profile = _copy(TINYTORCH, tmp_path)
    text = profile.read_text().replace("topo: given", "topo: nested")
    profile.write_text(text)
    line = text[: text.index("topo: nested")].count("\n") + 1
    with pytest.raises(ProfileError) as raised:
        profiles.load(profile)
    message = str(raised.value)
    assert message.startswith(f"{profile}:{line}: assignments/tinytorch/walk/topo: walk.topo ")
    assert "does not define tape, record, walk, grad" in message
    assert "\n" not in message


def test_the_walk_hooks_come_together(tmp_path):
    profile = _copy(CMU, tmp_path)
    adapter = profile.parent / "adapter.py"
    adapter.write_text(adapter.read_text().replace("def grad(", "def gradient_of("))
    with pytest.raises(ProfileError, match=r"adapter.py does not define grad: "):
        profiles.load(profile)
    profile.write_text(profile.read_text().replace("topo: nested", "topo: given"))
    with pytest.raises(ProfileError, match=r"defines tape, record, walk but not grad"):
        profiles.load(profile)


def test_a_profiles_snippets_spell_every_key_and_op(tmp_path):
    """A course adapter's snippets are the profile's data, checked when it is loaded: every
    key the snippets need, every op, no key the grader does not know, and an adapter."""
    profile = _copy(CMU, tmp_path)
    text = profile.read_text()
    profile.write_text(text.replace(" tanh: functional.tanh_backward,", ""))
    with pytest.raises(ProfileError, match=r"api/snippets does not spell backwards\.tanh\. "):
        profiles.load(profile)
    profile.write_text(
        text.replace('        walk: "autograd.backward', '        walks: "autograd.backward')
    )
    with pytest.raises(ProfileError, match=r"snippets: 'walk' is a required property"):
        profiles.load(profile)
    profile.write_text(text.replace("        walker: ", "        walk_name: "))
    with pytest.raises(ProfileError, match=r"snippets: .*'walk_name' (was|were) unexpected"):
        profiles.load(profile)
    profile.write_text(text.replace("      adapter: adapter.py\n", ""))
    with pytest.raises(ProfileError, match=r"api/snippets: spells an adapter's snippets"):
        profiles.load(profile)


def test_the_adapter_reads_the_buffer_as_the_snippets_spell_it(tmp_path):
    """The buffer is found in one place, the profile's snippets: the adapter reads it so."""
    profile = _copy(CMU, tmp_path)
    text = profile.read_text()
    assert "gradient_buffer" not in (CMU / "adapter.py").read_text()
    profile.write_text(text.replace("autograd.gradient_buffer if", "autograd.memory_buffer if"))
    api = profiles.load(profile).of("mytorch").api
    adapter = load_adapter(api.adapter_source, "mytorch", api.snippets)
    with isolated(CMU / "reference", "mytorch"):
        engine = adapter.load()
        with pytest.raises(AttributeError, match="memory_buffer"):
            adapter.grad(adapter.tape(engine), np.ones(1))


def test_a_buffer_that_sums_nothing_loses_its_item(tmp_path):
    """Its DAG and its tree agree (zeros both times): the tree's entries are also compared
    with what the grader's walk added into them."""
    nothing = Edit(
        "mytorch/utils.py",
        "        self.memory[location] = self.memory[location] + gradient\n",
        "        pass\n",
    )
    submission = plant(tmp_path, nothing, reference=CMU / "reference")
    report = grade_report(
        submission, rubric=CMU / "rubric.yaml", reference=CMU / "reference", only=["mytorch.buffer"]
    )
    (buffer,) = report.items
    assert buffer["score"] == 0
    assert "the GradientBuffer does not hold what was added into it" in buffer["reason"]


@pytest.mark.parametrize(
    ("bug", "item", "words"),
    [
        ("parameters-not-routed", "mytorch.backward", ["Autograd.backward", "dn1: expected"]),
        ("parameters-not-routed", "mytorch.graphs", ["db: expected"]),
        ("buffer-overwrites", "mytorch.buffer", ["the GradientBuffer lost", "get_param(n0) ("]),
        ("walk-zeroes-outputs", "mytorch.backward", ["Autograd.backward changed n", " in place"]),
        ("walk-zeroes-outputs", "mytorch.graphs", ["autograd.backward(np.ones_like(", "changed"]),
    ],
)
def test_the_feedback_is_in_the_courses_words(tmp_path, bug, item, words):
    """A planted bug's verdicts name the walk, the buffer and each gradient as 11-785's
    snippet reads them (a parameter's array, the buffer's entry; the whole graph's walk as its
    snippet calls it), never in babygrad's words (``n1.grad``, ``Tensor.backward``), and a
    snippet prints a changed array itself (its ``.data`` is a ``<memory at 0x...>``)."""
    (planted,) = [b for b in course_bugs(PLANTED) if b.name == bug]
    submission = plant(tmp_path, planted, reference=CMU / "reference")
    report = grade_report(
        submission, rubric=CMU / "rubric.yaml", reference=CMU / "reference", only=[item]
    )
    (graded,) = report.items
    told = "\n".join(
        line for failure in graded["failures"] for line in [failure["reason"], *failure["details"]]
    )
    assert all(word in told for word in words), told
    assert ".grad" not in told and "Tensor.backward" not in told, told
    printed = [line for f in graded["failures"] for line in f["snippet"].splitlines()]
    assert not [line for line in printed if line.startswith("print(") and ".data" in line]


FORGETS_GRAD_OUTPUT = Edit(
    "mytorch/functional.py",
    "    return (grad_output * np.exp(a),)\n",
    "    return (np.exp(a),)\n",
)
"""exp_backward without the chain rule: wrong in whichever module holds it."""


@pytest.mark.parametrize(
    ("graded", "beside", "marker"),
    [
        ("functional.py", "functional_hw1.py", "rnn_cell.py"),  # HW3P1 keeping HW1's file
        ("functional_hw1.py", "functional.py", None),  # HW1 with a functional.py beside it
    ],
)
def test_with_both_modules_the_snippet_runs_the_module_graded(tmp_path, graded, beside, marker):
    """An upload holding two years' backwards is graded on its detected year's (the edition's
    marker: HW3P1's rnn_cell.py, else HW1's functional_hw1.py), and the example it is shown
    runs that module: the bug, planted there alone, shows in a fresh interpreter."""
    submission = plant(tmp_path, FORGETS_GRAD_OUTPUT, reference=CMU / "reference")
    package = submission / "mytorch"
    (package / "functional.py").rename(package / graded)
    shutil.copy(CMU / "reference" / "mytorch" / "functional.py", package / beside)
    if marker:
        (package / marker).write_text("# the handout's RNN cell\n")
    report = grade_report(
        submission,
        rubric=CMU / "rubric.yaml",
        reference=CMU / "reference",
        only=["mytorch.exp_backward"],
    )
    (item,) = report.items
    assert item["score"] == 0, item
    shown = [failure["snippet"] for failure in item["failures"] if failure["snippet"]]
    assert shown
    for snippet in shown:
        assert as_a_student(snippet, submission) != as_a_student(snippet, CMU / "reference")
