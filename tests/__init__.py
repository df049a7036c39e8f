"""The project's own tests of the grader: a folder per stage of ``grader/``
(``tests/project/test_tests_layout.py`` holds them so), ``flows/`` for whole runs as users make
them, ``project/`` for the repository's shape and documentation, and ``helpers/`` for what they
share. The commands on top (``python -m tests.same_grades``, ``tests.seed_sweep``,
``tests.self_audit``, ``tests.fork_costs``) are not tests."""
