"""The hostile catalog: broken, slow, abusive, lying, tampering, hijacking and snooping
submissions, each graded end to end through the real pipeline (``grader.run.api.grade``).

Each entry plants a few lines into a copy of the reference (at the top of
``micrograd/engine.py``, or inside one op) or adds files next to it, grades the affected item and
one or two that must stay green, and checks: the affected items' statuses, zero points for them,
a one-line reason that says what happened, full marks for the rest, and, where the entry reaches
for them, that no process survives and no file outside the scratch space changed.

Entries run as graded by default ("auto": bubblewrap here); those that depend on the sandbox run
with ``sandbox="bwrap"`` (never falling back) and ``sandbox="none"``, where several protections
are weaker (docs/security.md) and the test checks at least that the grade is right.
Bombs are bounded: a few hundred processes, 2 GiB.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import socket
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from grader.layout import DEFAULT_RUBRIC
from grader.report.document import GradeReport
from grader.run.api import GradeOptions, GraderFailure, grade
from grader.sandbox.policy import DEFAULT_LIMITS
from tests.helpers.grading import EXERCISES, REFERENCE, REPO, planted
from tests.helpers.planted import TANH_DERIVATIVE
from tests.helpers.processes import processes_with
from tests.helpers.programs import SANDBOX_MODES, needs_bwrap

MICRO = "micrograd/engine.py"
OPS = "babygrad/ops.py"
TOP = "import math\n"  # plant after it: runs at import
EXP = 'out = Value(math.exp(self.data), (self,), "exp")'  # plant before it: runs in exp
EXP_BACKWARD = "self.grad += out.data * out.grad"
TANH = "t = math.tanh(self.data)"
pytestmark = pytest.mark.slow  # every test grades at least once: 2 to 10 s each


def at_import(code: str) -> tuple[str, str]:
    """A replacement that runs ``code`` when micrograd/engine.py is imported."""
    return TOP, TOP + textwrap.dedent(code).lstrip("\n")


def in_op(code: str, anchor: str = EXP) -> tuple[str, str]:
    """A replacement that runs ``code`` in a method body, just before ``anchor``."""
    lines = textwrap.dedent(code).strip().splitlines()
    return anchor, "\n        ".join([*lines, anchor])


def unimplemented_tanh(code: str = "") -> tuple[str, str]:
    """tanh runs ``code``, then raises NotImplementedError: the engine earns nothing there."""
    return in_op(f"{code}\nraise NotImplementedError('tanh')", TANH)


NO_TANH = {"micrograd.ops.tanh": ("missing", "not implemented: tanh")}


def grade_report(
    submission: Path, only: list[str], *, sandbox: str = "auto", rubric: Path = DEFAULT_RUBRIC
) -> GradeReport:
    """Grade the ``only`` items as the CLI does (the assignments they belong to run)."""
    return grade(
        GradeOptions(submission=submission, only=tuple(only), sandbox=sandbox, rubric=rubric)
    )


Verdict = tuple[str, str]
"""An item's status and a text its one-line reason contains."""


def assert_graded(report: GradeReport, expected: dict[str, Verdict | list[Verdict]]) -> None:
    """Each item in ``expected`` has no points, a one-line reason and that verdict (or one of
    a list of them, where which one a submission earns depends on the machine's speed); every
    other item passed with full marks."""
    items = {item["id"]: item for item in report.items}
    for item_id, item in items.items():
        if item_id in expected:
            verdicts = expected[item_id]
            allowed = verdicts if isinstance(verdicts, list) else [verdicts]
            assert item["score"] == 0 and "\n" not in item["reason"], item
            assert any(
                item["status"] == status and reason in item["reason"] for status, reason in allowed
            ), (item["status"], item["reason"], allowed)
        else:
            assert item["status"] == "passed", (item_id, item["reason"], item["feedback"])
            assert item["score"] == item["max_score"]


@pytest.fixture
def token() -> str:
    """A ``sleep`` argument no other process has: what a planted child runs, to be found."""
    return f"97.{uuid.uuid4().int % 10**12:012d}"


# --------------------------------------------------------------------------- broken

BROKEN = {
    "syntax error": (
        {MICRO: [("def exp(self):", "def exp(self)")]},
        ["micrograd.ops.add", "micrograd.topo"],
        {"micrograd.ops.add": ("error", "SyntaxError"), "micrograd.topo": ("error", "SyntaxError")},
    ),
    "import error": (
        {MICRO: [at_import("import micrograd_helpers\n")]},
        ["micrograd.ops.add"],
        {"micrograd.ops.add": ("error", "No module named 'micrograd_helpers'")},
    ),
    "exception at import": (
        {MICRO: [at_import("raise RuntimeError('engine refuses to load')\n")]},
        ["micrograd.ops.add"],
        {"micrograd.ops.add": ("error", "RuntimeError: engine refuses to load")},
    ),
    "sys.exit at import": (
        {MICRO: [at_import("import sys\nsys.exit('bye')\n")]},
        ["micrograd.ops.add"],
        {"micrograd.ops.add": ("error", "SystemExit: bye")},
    ),
    "os._exit at import": (
        {MICRO: [at_import("import os\nos._exit(0)\n")]},
        ["micrograd.ops.add"],
        {"micrograd.ops.add": ("error", "exited (exit code 0) without replying")},
    ),
    "missing function": (
        {MICRO: [("def zero_grad(root):", "def _zero_grad(root):")]},
        ["micrograd.zero_grad", "micrograd.ops.add"],
        {"micrograd.zero_grad": ("missing", "not implemented: zero_grad")},
    ),
    "missing method": (  # not gradable on accumulate until it is there: no cost there
        {MICRO: [("def exp(self):", "def _exp(self):")]},
        ["micrograd.ops.exp", "micrograd.ops.add", "micrograd.accumulate"],
        {"micrograd.ops.exp": ("missing", "not implemented: exp")},
    ),
    "wrong signature": (
        {MICRO: [("def tanh(self):", "def tanh(self, k):")]},
        ["micrograd.ops.tanh", "micrograd.ops.add"],
        {"micrograd.ops.tanh": ("error", "missing 1 required positional argument: 'k'")},
    ),
    "exception inside one op": (
        {MICRO: [in_op("raise ValueError('exp is broken')")]},
        ["micrograd.ops.exp", "micrograd.ops.add", "micrograd.accumulate"],
        {"micrograd.ops.exp": ("error", "ValueError: exp is broken")},
    ),
    "sys.exit inside one op": (
        {MICRO: [in_op("import sys\nsys.exit(3)")]},
        ["micrograd.ops.exp", "micrograd.ops.add"],
        {"micrograd.ops.exp": ("error", "SystemExit: 3")},
    ),
    "segfault via ctypes": (
        {MICRO: [in_op("import ctypes\nctypes.string_at(0)")]},
        ["micrograd.ops.exp", "micrograd.ops.add", "micrograd.accumulate"],
        {"micrograd.ops.exp": ("error", "crashed (killed by signal 11")},
    ),
    "deep recursion": (
        {MICRO: [in_op("def down(n):\n    return down(n + 1)\ndown(0)")]},
        ["micrograd.ops.exp", "micrograd.ops.add"],
        {"micrograd.ops.exp": ("error", "RecursionError")},
    ),
    "babygrad: exception at import of ops.py": (
        {OPS: [("import numpy as np\n", "import numpy as np\n\nraise ImportError('no ops')\n")]},
        ["babygrad.ops.add", "micrograd.ops.add"],
        {"babygrad.ops.add": ("error", "ImportError: no ops")},
    ),
}


@pytest.mark.parametrize("name", BROKEN)
def test_broken(tmp_path, name):
    plants, only, expected = BROKEN[name]
    assert_graded(grade_report(planted(tmp_path, plants), only), expected)


def test_missing_module_costs_only_its_assignment(tmp_path):
    submission = planted(tmp_path, {})
    (submission / MICRO).unlink()
    report = grade_report(submission, ["micrograd.ops.add", "babygrad.ops.add"])
    assert_graded(
        report, {"micrograd.ops.add": ("missing", "not submitted (looked for micrograd/engine.py")}
    )


# --------------------------------------------------------------------------- slow

BURN = """
import time
started = time.process_time()
while time.process_time() - started < {seconds}:
    pass
"""

SLOW = {
    "infinite loop in one op": (
        {MICRO: [in_op("while True:\n    pass")]},
        ["micrograd.ops.exp", "micrograd.ops.add"],
        {"micrograd.ops.exp": ("timeout", "timed out after 1.0 s of CPU time")},
    ),
    "infinite loop in one op's _backward": (  # not gradable on accumulate: no cost there
        {MICRO: [(EXP_BACKWARD, f"while True:\n                pass\n            {EXP_BACKWARD}")]},
        ["micrograd.ops.exp", "micrograd.accumulate"],
        {"micrograd.ops.exp": ("timeout", "timed out after 1.0 s of CPU time")},
    ),
    "infinite loop in backward": (
        {MICRO: [in_op("while True:\n    pass", "for node in reversed(order):")]},
        ["micrograd.backward", "micrograd.ops.add"],
        {"micrograd.backward": ("timeout", "timed out after 1.0 s of CPU time")},
    ),
    "infinite loop at import": (  # one import timeout, then every item fails at once
        {MICRO: [at_import("while True:\n    pass\n")]},
        ["micrograd.ops.add", "micrograd.ops.mul", "micrograd.ops.exp"],
        {
            item: ("timeout", "while importing: timed out after 2.0 s of CPU time")
            for item in ("micrograd.ops.add", "micrograd.ops.mul", "micrograd.ops.exp")
        },
    ),
    "sleeping forever in one op": (
        {MICRO: [in_op("import time\ntime.sleep(3600)")]},
        ["micrograd.ops.exp", "micrograd.ops.add"],
        {"micrograd.ops.exp": ("timeout", "s of wall-clock time")},
    ),
    "each call slower than the budget": (
        {MICRO: [in_op(BURN.format(seconds=2))]},
        ["micrograd.ops.exp", "micrograd.ops.add"],
        {"micrograd.ops.exp": ("timeout", "timed out after 1.0 s of CPU time")},
    ),
    "each call within the budget, too slow in all": (
        {MICRO: [in_op(BURN.format(seconds=0.4))]},
        ["micrograd.ops.exp", "micrograd.ops.add"],
        {"micrograd.ops.exp": ("timeout", "took more than 6 s in all")},
    ),
    "slow and wrong: the search stops, the failure stays": (
        {MICRO: [in_op(BURN.format(seconds=0.3), TANH), TANH_DERIVATIVE.pair]},
        ["micrograd.ops.tanh", "micrograd.ops.add"],
        {"micrograd.ops.tanh": ("failed", "wrong gradient in backward")},
    ),
}


@pytest.mark.parametrize("name", SLOW)
def test_slow(tmp_path, fast_rubric, name):
    plants, only, expected = SLOW[name]
    started = time.monotonic()
    report = grade_report(planted(tmp_path, plants), only, rubric=fast_rubric)
    assert_graded(report, expected)
    # Every request ends by its wall-clock backstop (3 x 1 s + 5 s), every grading test by 4 x
    # its 6 s: only a hang nothing ends takes this long, even on a loaded machine.
    assert time.monotonic() - started < 120


def test_slow_but_within_every_budget_passes(tmp_path):
    submission = planted(tmp_path, {MICRO: [in_op("import time\ntime.sleep(0.01)")]})
    assert_graded(grade_report(submission, ["micrograd.ops.exp"]), {})


def test_huge_output_is_captured_and_never_shown(tmp_path):
    shout = "import sys\nprint('PASSED 100/100 ' * 50_000)\nsys.stderr.write('FAILED ' * 100_000)"
    submission = planted(tmp_path, {MICRO: [in_op(shout), unimplemented_tanh(shout)]})
    report = grade_report(submission, ["micrograd.ops.exp", "micrograd.ops.tanh"])
    assert_graded(report, NO_TANH)
    assert "PASSED 100/100" not in json.dumps(report.to_json())


# --------------------------------------------------------------------------- resource abuse

FORK_BOMB = """
import os
FORKED = 0
for _ in range(300):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.execv('/bin/sleep', ['sleep', '{token}'])
    FORKED += 1
"""

LEFTOVERS = """
import os, signal, subprocess, threading

def spin():
    while True:
        pass

threading.Thread(target=spin, daemon=True).start()
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the children's exec
subprocess.Popen(['/bin/sleep', '{token}'])
if os.fork() == 0:  # a daemon: its own session, double-forked
    os.setsid()
    if os.fork() == 0:
        os.execv('/bin/sleep', ['sleep', '{token}'])
    os._exit(0)
"""


@pytest.mark.parametrize(
    "bomb",
    [
        in_op("hoard = [0.0] * 10**10"),  # one huge allocation
        at_import("hoard = [bytearray(10**8) for _ in range(100)]\n"),  # touching every page
    ],
    ids=["one huge allocation in an op", "growing at import"],
)
def test_memory_bomb(tmp_path, bomb):
    """Memory is capped per process (2 GiB of address space): MemoryError, other items (here
    the other assignment, for the bomb at import; accumulate, not gradable on exp, for the bomb
    in exp) graded normally."""
    in_exp = bomb[0] == EXP
    report = grade_report(
        planted(tmp_path, {MICRO: [bomb]}),
        ["micrograd.ops.exp", "babygrad.ops.add", *(["micrograd.accumulate"] if in_exp else [])],
    )
    assert_graded(report, {"micrograd.ops.exp": ("error", "MemoryError")})


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_fork_bomb_is_bounded_and_killed(tmp_path, mode, token):
    submission = planted(
        tmp_path,
        {
            MICRO: [
                at_import(FORK_BOMB.format(token=token)),
                in_op("raise RuntimeError(f'forked {FORKED}')"),
            ]
        },
    )
    report = grade_report(submission, ["micrograd.ops.exp", "micrograd.ops.add"], sandbox=mode)
    assert_graded(report, {"micrograd.ops.exp": ("error", "RuntimeError: forked ")})
    forked = int(
        next(i for i in report.items if i["id"] == "micrograd.ops.exp")["reason"].rsplit(" ", 1)[1]
    )
    if mode == "none":  # as root the process limit does not bite: only the kill at the end
        assert forked == 300
    else:
        assert forked < DEFAULT_LIMITS.processes
    assert not processes_with(token)


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_threads_children_and_daemons_left_running_then_a_correct_engine(tmp_path, mode, token):
    """The worker's leftovers (a spinning thread, a child and a setsid daemon that ignore
    SIGTERM) do not cost the items, die with the worker, and do not touch the next grade."""
    submission = planted(tmp_path, {MICRO: [at_import(LEFTOVERS.format(token=token))]})
    only = ["micrograd.ops.exp", "micrograd.graphs"]
    assert_graded(grade_report(submission, only, sandbox=mode), {})
    assert not processes_with(token)
    assert_graded(grade_report(REFERENCE, only, sandbox=mode), {})


def test_filling_the_disk_is_bounded_and_cleaned_up(tmp_path, fast_rubric, token):
    fill = (
        f"for n in range(4):\n    open('{token}-' + str(n), 'wb').write(b'x' * 40_000_000)\n"
        f"open('{token}-big', 'wb').write(b'x' * 100_000_000)"
    )
    submission = planted(tmp_path, {MICRO: [in_op(fill)]})
    report = grade_report(
        submission, ["micrograd.ops.exp", "micrograd.ops.add"], rubric=fast_rubric
    )
    assert_graded(
        report,
        {
            "micrograd.ops.exp": [
                ("error", "File too large"),  # the 64 MB file limit stopped the last write
                ("timeout", "timed out after"),  # or a loaded machine's disk took longer than 1 s
            ]
        },
    )
    assert not _left_in_worker_directories(token)


def _left_in_worker_directories(token: str) -> list[Path]:
    """Files named for `token` in any worker's scratch directory. Other tests' workers come
    and go meanwhile, so a directory that vanishes while it is read holds nothing of ours."""
    left: list[Path] = []
    for directory in Path(tempfile.gettempdir()).glob("grader-worker-*"):
        with contextlib.suppress(FileNotFoundError):
            left += directory.glob(f"{token}-*")
    return left


# --------------------------------------------------------------------------- lying values


def exp_data(expression: str, prelude: str = "") -> dict[str, list[tuple[str, str]]]:
    """exp with an honest backward whose forward value (``out.data``) is ``expression``."""
    return {
        MICRO: [
            *([in_op(prelude)] if prelude else []),
            (EXP, f"{EXP}\n        out.data = {expression}"),
            (EXP_BACKWARD, "self.grad += math.exp(self.data) * out.grad"),
        ]
    }


ALWAYS_EQUAL = "class Liar:\n    def __eq__(self, other):\n        return True"
LYING_FLOAT = "\n".join(
    [
        "class Liar(float):",
        *[
            f"    def {name}(self, other):\n        return {result}"
            for name, result in [
                ("__eq__", True),
                ("__ne__", False),
                ("__lt__", False),
                ("__gt__", False),
                ("__le__", True),
                ("__ge__", True),
                ("__sub__", 0.0),
                ("__rsub__", 0.0),
            ]
        ],
        "    def __abs__(self):\n        return 0.0",
    ]
)
HONEST_FLOAT = "class Honest(float):\n    pass"

NOT_A_NUMBER = ("error", "is not a number")
WRONG = ("failed", "wrong forward value")
LYING = {  # the value exp's forward reports; None as the verdict: passes
    "a string": (exp_data("'e to the x'"), NOT_A_NUMBER),
    "None": (exp_data("None"), NOT_A_NUMBER),
    "NaN": (exp_data("float('nan')"), WRONG),
    "an object equal to everything": (exp_data("Liar()", ALWAYS_EQUAL), NOT_A_NUMBER),
    "a float subclass whose comparisons lie": (exp_data("Liar(0.0)", LYING_FLOAT), WRONG),
    "an honest float subclass": (exp_data("Honest(out.data)", HONEST_FLOAT), None),
    "a numpy scalar": (exp_data("__import__('numpy').float64(out.data)"), None),
}


@pytest.mark.parametrize("name", [*LYING, "a numeric string"])
def test_values_that_are_not_numbers(tmp_path, name):
    plants, verdict = LYING.get(name, (exp_data("repr(out.data)"), NOT_A_NUMBER))
    report = grade_report(planted(tmp_path, plants), ["micrograd.ops.exp", "micrograd.ops.add"])
    assert_graded(report, {"micrograd.ops.exp": verdict} if verdict else {})


def test_an_int_where_the_answer_is_integral(tmp_path):
    submission = planted(tmp_path, {MICRO: [("node.grad = 0.0", "node.grad = 0")]})
    assert_graded(grade_report(submission, ["micrograd.zero_grad"]), {})


def test_wrong_shapes(tmp_path):
    submission = planted(
        tmp_path,
        {
            OPS: [
                (
                    "g = np.broadcast_to(np.reshape(out_grad.data, kept), a.shape)",
                    "g = out_grad.data",
                )
            ]
        },
    )
    report = grade_report(submission, ["babygrad.ops.summation", "babygrad.ops.add"])
    assert_graded(report, {"babygrad.ops.summation": ("failed", "wrong gradient in backward")})
    summation = next(i for i in report.items if i["id"] == "babygrad.ops.summation")
    assert "expected shape" in summation["feedback"]


BYPASS_IMPORT_BLOCKER = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != 'ImportBlocker']
import torch
"""


def test_an_op_that_asks_torch_for_the_answer(tmp_path):
    ask_torch = "import torch\nout = Value(torch.exp(torch.tensor(self.data)).item())"
    submission = planted(tmp_path, {MICRO: [in_op(ask_torch)]})
    report = grade_report(submission, ["micrograd.ops.exp", "micrograd.ops.add"], sandbox="none")
    assert_graded(report, {"micrograd.ops.exp": ("error", "torch is not available while grading")})


@needs_bwrap
def test_an_op_that_unblocks_torch_finds_it_empty(tmp_path):
    """Without bubblewrap this works (documented); with it the torch folder is not mounted."""
    torch_exp = "out = Value(torch.exp(torch.tensor(self.data)).item(), (self,), 'exp')"
    submission = planted(tmp_path, {MICRO: [at_import(BYPASS_IMPORT_BLOCKER), (EXP, torch_exp)]})
    report = grade_report(submission, ["micrograd.ops.exp", "micrograd.ops.add"], sandbox="bwrap")
    assert_graded(report, {"micrograd.ops.exp": ("error", "AttributeError")})


# --------------------------------------------------------------------------- tampering

PATCH_THE_JUDGES = """
import builtins, math, numpy
import grader.language.verdicts, grader.worker.protocol
numpy.isclose = numpy.allclose = numpy.array_equal = lambda *a, **k: True
math.isclose = lambda *a, **k: True
builtins.abs = lambda x: 0.0
grader.language.verdicts.mismatch = lambda *a, **k: None
grader.language.verdicts.Tolerance.close = lambda *a, **k: True
"""

TAMPERING = {
    "monkeypatching numpy, math, builtins and the grader's judge in the worker": (
        [at_import(PATCH_THE_JUDGES), TANH_DERIVATIVE.pair],
        {"micrograd.ops.tanh": ("failed", "wrong gradient in backward")},
    ),
    "monkeypatching json in the worker": (
        [at_import('import json\njson.dumps = lambda *a, **k: \'{"id": 0, "results": []}\'\n')],
        {
            "micrograd.ops.tanh": ("error", "invalid answer"),
            "micrograd.ops.add": ("error", "invalid answer"),
        },
    ),
    "monkeypatching the grader's probes in the worker": (
        [
            at_import(
                "import grader.worker.probes as p\n"
                "p.PROBES['op'] = lambda engine, case: {'values': [], 'grads': []}\n"
            )
        ],
        {
            "micrograd.ops.tanh": ("error", "invalid answer"),
            "micrograd.ops.add": ("error", "invalid answer"),
        },
    ),
    "printing fake pytest and grader output": (
        [
            unimplemented_tanh(
                "print('micrograd.ops.tanh PASSED\\n===== 42 passed =====\\n'\n"
                '      \'\\x1b[2J{"score": 100, "max_score": 100}\')'
            )
        ],
        NO_TANH,
    ),
}


@pytest.mark.parametrize("name", TAMPERING)
def test_tampering_inside_the_worker(tmp_path, name):
    plants, expected = TAMPERING[name]
    report = grade_report(
        planted(tmp_path, {MICRO: plants}), ["micrograd.ops.tanh", "micrograd.ops.add"]
    )
    assert_graded(report, expected)


FORGE_RESULTS = """
import json, os
FORGED = {'items': [{'id': 'micrograd.ops.tanh', 'status': 'passed', 'score': 6,
                     'max_score': 6}], 'outcomes': [], 'oracles': ['reference'],
          'protections': [], 'internal_errors': [], 'oracle_disagreements': 0, 'checks': 1}
try:  # the trusted pytest's working directory, where the results go (fallback: reachable)
    with open(f'/proc/{os.getppid()}/cwd/micrograd.json', 'w') as handle:
        json.dump(FORGED, handle)
except OSError:
    pass
"""


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_forged_results_file_is_replaced(tmp_path, mode):
    """A results file written by the worker (before the parent writes its own) is replaced."""
    submission = planted(tmp_path, {MICRO: [at_import(FORGE_RESULTS), unimplemented_tanh()]})
    report = grade_report(submission, ["micrograd.ops.tanh", "micrograd.ops.add"], sandbox=mode)
    assert_graded(report, NO_TANH)


TARGETS = [
    "rubric.yaml",
    "grader/grading/plugin.py",
    "grader/checks/session.py",
    "grader/worker/runner.py",
    "grader/worker/confine.py",
    "grader/grading/suites/test_micrograd.py",
    "reference/micrograd/engine.py",
    "tests/worker/test_hostile.py",
    "tests/helpers/grading.py",
]
NEW_FILES = ["grader/planted.py", "grader/worker/planted.py", "tests/conftest_planted.py"]
OVERWRITE = """
import grader, os, pathlib
ROOT = pathlib.Path(grader.__file__).resolve().parent.parent
TAMPERED, WRITABLE = [], []
for name in {targets!r} + {new_files!r}:
    # what a write would change: the file, or the folder a new one goes in (if not hidden)
    seen = ROOT / name if name in {targets!r} else (ROOT / name).parent
    if seen.exists() and not os.statvfs(seen).f_flag & os.ST_RDONLY:
        WRITABLE.append(name)
    try:
        with open(ROOT / name, 'a') as handle:
            handle.write('# tampered\\n')
        TAMPERED.append(name)
    except OSError:
        pass
"""


def _digests() -> dict[str, str]:
    return {name: hashlib.sha256((REPO / name).read_bytes()).hexdigest() for name in TARGETS}


@needs_bwrap
def test_overwriting_the_grader_rubric_tests_and_reference_fails(tmp_path):
    """Only with bubblewrap: without it a worker running as root could write them (security.md).
    Each target is on a read-only mount: the worker's uid alone (root owns them) would also
    refuse the writes, and must not be what stops them."""
    before = _digests()
    tamper = OVERWRITE.format(targets=TARGETS, new_files=NEW_FILES)
    verdict = "raise ValueError(f'tampered: {TAMPERED}, on a writable mount: {WRITABLE}')"
    submission = planted(tmp_path, {MICRO: [at_import(tamper), in_op(verdict)]})
    report = grade_report(submission, ["micrograd.ops.exp", "micrograd.ops.add"], sandbox="bwrap")
    assert_graded(report, {"micrograd.ops.exp": ("error", "tampered: [], on a writable mount: []")})
    assert _digests() == before
    assert not [name for name in NEW_FILES if (REPO / name).exists()]


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_killing_the_parent(tmp_path, mode):
    kill = in_op("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)")
    submission = planted(tmp_path, {MICRO: [kill]})
    only = ["micrograd.ops.exp", "micrograd.ops.add"]
    if mode == "none":  # as root (security.md): the worker can kill the grader; the run fails
        with pytest.raises(GraderFailure, match="pytest exit -9"):
            grade_report(submission, only, sandbox=mode)
    else:  # its parent is the sandbox's init, of another uid
        assert_graded(
            grade_report(submission, only, sandbox=mode),
            {"micrograd.ops.exp": ("error", "PermissionError")},
        )


# --------------------------------------------------------------------------- hijacking

REWRITE_REPORTS = """
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    report.outcome, report.longrepr = 'passed', None
"""
CONFIGS = {
    "pytest.ini": "[pytest]\naddopts = -p hijack\n",
    "tox.ini": "[pytest]\naddopts = -p hijack\n",
    "setup.cfg": "[tool:pytest]\naddopts = -p hijack\n",
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p hijack"\n',
}


def test_conftest_and_config_files_never_reach_the_trusted_run(tmp_path):
    """Stubs with a conftest (and configs loading a plugin) that rewrite failures into passes:
    still nothing implemented, zero points."""
    submission = tmp_path / "submission"
    shutil.copytree(EXERCISES, submission, ignore=shutil.ignore_patterns("__pycache__"))
    for folder in (submission, submission / "micrograd"):
        (folder / "conftest.py").write_text(REWRITE_REPORTS)
    (submission / "hijack.py").write_text(REWRITE_REPORTS)
    for name, text in CONFIGS.items():
        (submission / name).write_text(text)
    report = grade_report(submission, ["micrograd.ops.add", "micrograd.topo"])
    assert_graded(
        report,
        {
            "micrograd.ops.add": ("missing", "not implemented"),
            "micrograd.topo": ("missing", "not implemented"),
        },
    )


SHADOWS = [
    "numpy.py",
    "json.py",
    "torch.py",
    "hypothesis.py",
    "grader.py",
    "pytest.py",
    "sitecustomize.py",
    "usercustomize.py",
    "conftest.py",
]


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_shadowing_modules_reach_neither_process(tmp_path, mode):
    """A correct engine next to modules that would sabotage whoever imports them (and a .pth
    file) still gets full marks: the worker imports the real libraries, the trusted run never
    sees the submission folder."""
    submission = planted(tmp_path, {})
    for name in SHADOWS:
        (submission / name).write_text(f"raise SystemExit('hijacked by {name}')\n")
    (submission / "hijack.pth").write_text("import os; os._exit(66)\n")
    (submission / "babygrad" / "numpy.py").write_text("raise SystemExit('hijacked')\n")
    only = ["micrograd.ops.add", "micrograd.graphs", "babygrad.ops.matmul", "babygrad.graphs"]
    assert_graded(grade_report(submission, only, sandbox=mode), {})


# --------------------------------------------------------------------------- snooping

SECRET_MODULES = [
    "reference.micrograd.engine",
    "grader.grading.suites.test_micrograd",
    "grader.oracles.reference",
    "torch",
]
SECRET_FILES = [
    "reference/micrograd/engine.py",
    "grader/grading/suites/test_micrograd.py",
    "grader/oracles/reference.py",
    "rubric.yaml",
    "tests/engines/notes_style/micrograd/engine.py",
    "tests/worker/test_hostile.py",
]
SNOOP = """
import grader, importlib, pathlib
ROOT = pathlib.Path(grader.__file__).resolve().parent.parent
leaks = []
for module in {modules!r}:
    try:
        leaks.append(f'{{module}} {{dir(importlib.import_module(module))[:3]}}')
    except ImportError:
        pass
for name in {files!r}:
    try:
        text = (ROOT / name).read_text()
    except OSError:
        continue
    print(text)
    leaks.append(f'{{name}} {{text[:30]!r}}')
raise ValueError(f'leaked {{len(leaks)}}: ' + '; '.join(leaks))
"""


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_snooping_finds_nothing_to_leak(tmp_path, mode):
    """Secrets leak through an exception message, a print or a value only if they can be
    read: with bubblewrap nothing can; without it the files can, the modules cannot."""
    snoop = SNOOP.format(modules=SECRET_MODULES, files=SECRET_FILES)
    submission = planted(tmp_path, {MICRO: [in_op(snoop)]})
    report = grade_report(submission, ["micrograd.ops.exp", "micrograd.ops.add"], sandbox=mode)
    assert_graded(report, {"micrograd.ops.exp": ("error", "ValueError: leaked ")})
    reason = next(i for i in report.items if i["id"] == "micrograd.ops.exp")["reason"]
    assert not [m for m in SECRET_MODULES if m in reason]  # the import blocker holds in both
    if mode == "none":  # no filesystem isolation (docs/security.md)
        assert f"leaked {len(SECRET_FILES)}: " in reason
    else:
        assert reason == "ValueError: leaked 0:"
        assert "BEGIN SOLUTION" not in json.dumps(report.to_json())


@pytest.mark.parametrize("mode", SANDBOX_MODES)
def test_network(tmp_path, mode):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        call = (
            f"import socket\nsocket.create_connection(('127.0.0.1', "
            f"{server.getsockname()[1]}), timeout=2).close()"
        )
        submission = planted(tmp_path, {MICRO: [in_op(call)]})
        report = grade_report(submission, ["micrograd.ops.exp", "micrograd.ops.add"], sandbox=mode)
        if mode == "none":  # no network isolation (docs/security.md): graded as the engine it is
            assert_graded(report, {})
            return
        assert_graded(report, {"micrograd.ops.exp": ("error", "Connection refused")})
        with pytest.raises(BlockingIOError):
            server.accept()


def test_sigterm_ignoring_child_is_killed(tmp_path, fast_rubric, token):
    hang = (
        f"import signal, subprocess\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"subprocess.Popen(['/bin/sleep', '{token}'])\nwhile True:\n    pass"
    )
    submission = planted(tmp_path, {MICRO: [in_op(hang)]})
    report = grade_report(
        submission, ["micrograd.ops.exp", "micrograd.ops.add"], rubric=fast_rubric
    )
    assert_graded(report, {"micrograd.ops.exp": ("timeout", "timed out")})
    assert not processes_with(token)
