"""Automated grading harness for hand-built autograd engines."""

import os

from grader.threads import ONE_THREAD

__version__ = "0.1.0"

# before any of the grader's modules imports numpy; a value the user set stays
os.environ.update({name: value for name, value in ONE_THREAD.items() if name not in os.environ})
