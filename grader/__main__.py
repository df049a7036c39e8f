"""``python -m grader``: see grader.workflows.cli."""

import sys

from grader.workflows.cli import main

sys.exit(main())
