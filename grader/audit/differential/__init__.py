"""A wide differential run of an engine against the reference, to triage surviving mutants.

``differ(reference, candidate, assignment)`` writes hundreds of random, straight-line programs
in the course's own API (deterministic from ``seed``), runs all of them through each engine in
one subprocess per engine, and compares what each program printed, program by program: every
number with a tight tolerance, everything else exactly, an exception by its type. It returns
the shortest program (fewest lines) whose outcome differs, with both outcomes, or ``None``;
programs the reference runs without raising come first (an edge case where the reference
raises shows a hole less plainly).

The programs are much wider than the grading tests: every operator with Values, Tensors and
plain numbers on either side, every op as an operator, a method, a function and a ``Function``
object, tensors that do not require grad beside ones that do, implicit broadcasting, random
(never all-ones) upstream gradients, closures and ``Function.backward`` called alone,
``backward()`` twice, ``zero_grad``, ``build_topo``, the kinks of relu and abs, and deep
chains. Each prints every node's value and gradient.

Only what the course's API promises is compared, so a mutant that differs elsewhere is listed
as probably equivalent, for a person to confirm: values and gradients (not their dtypes: a
float64 gradient for float32 data is correct), shapes, ``requires_grad``, which operands a
node has (not their order), ``build_topo``'s exact order only where a single order is valid
(elsewhere: its length, that it holds each node once, operands first, the root last), and
``matmul`` on operands of 2 or more dimensions only (as its docstring says).

The candidate runs its programs shortest first and stops at the first difference, so a
mutant that differs costs little more than starting Python. A program that spends more than
``PROGRAM_CPU_S`` of CPU time "timed out" (a CPU timer inside the run); a run that outlives
``timeout`` seconds of wall time is killed and the program in flight "timed out". The
reference's outcomes are cached in the process, since the audit triages many mutants against
one reference.

``runner`` runs and compares (``differ``, ``run_all``, the driver, the cache); ``programs``
holds what both assignments' generators share, and ``generate``; ``micrograd_programs`` and
``babygrad_programs`` hold each assignment's families.
"""

from grader.audit.differential.generate import generate
from grader.audit.differential.runner import (
    ASSIGNMENTS,
    MEMORY_MB,
    PROGRAM_CPU_S,
    TIMED_OUT,
    TOLERANCE,
    Difference,
    Outcome,
    differ,
    run_all,
    same,
    same_text,
)

__all__ = [
    "ASSIGNMENTS",
    "MEMORY_MB",
    "PROGRAM_CPU_S",
    "TIMED_OUT",
    "TOLERANCE",
    "Difference",
    "Outcome",
    "differ",
    "generate",
    "run_all",
    "same",
    "same_text",
]
