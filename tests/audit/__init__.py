"""The rubric audit: mutants, differential and coverage runs, and the self-audit of the project's
tests (``grader/audit/``)."""
