"""``python -m grader``: see grader.workflows.cli. A grade's grading process is started before
anything else is imported (``grader.run.prestart``)."""

import sys

from grader.run import prestart

prestart.begin(sys.argv[1:])

from grader.workflows.cli import main  # noqa: E402 - after the grading process has started

sys.exit(main())
