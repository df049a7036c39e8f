"""GitHub Classroom's reading of a grade: two workflow notices, printed from a ``--json`` file.

Classroom looks for a notice titled "Autograding complete" with text ``Points X/Y`` and one
titled "Autograding report" with ``{"totalPoints":X,"maxPoints":Y}``. Students own the
repository and its workflow, so this grade is advisory; the instructor's batch run is the
grade of record.

    python -m grader.report.formats.classroom grade.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def notices(score: float, maximum: float) -> str:
    """The two workflow-command lines GitHub Classroom reads."""
    score, maximum = _number(score), _number(maximum)
    report = json.dumps({"totalPoints": score, "maxPoints": maximum}, separators=(",", ":"))
    return (
        f"::notice title=Autograding complete::Points {score}/{maximum}\n"
        f"::notice title=Autograding report::{report}\n"
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m grader.report.formats.classroom GRADE_JSON", file=sys.stderr)
        return 2
    path = Path(args[0])
    if not path.is_file():
        print(
            f"{path} is missing: the grade step wrote no report (its log says why), so there "
            "are no points to report",
            file=sys.stderr,
        )
        return 1
    document = json.loads(path.read_text())
    sys.stdout.write(notices(document["score"], document["max_score"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
