"""A grade's run: the pytest plugin, the session (worker, budgets, aborts), the rubric and scoring,
and the grading tests in ``suites/``.
"""
