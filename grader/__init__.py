"""Automated grading harness for hand-built autograd engines."""

__version__ = "0.1.0"
