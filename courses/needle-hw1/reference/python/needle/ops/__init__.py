"""needle's operations: every class and function of ops_mathematic, re-exported."""

from .ops_mathematic import *  # noqa: F401,F403
