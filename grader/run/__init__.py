"""One grade, run as a program: the API every job calls (``api.grade``, its options and exit
codes), the command-line options they share (``arguments``), the upload a grade reads (a folder,
``.py``, ``.ipynb`` or ``.zip``: ``submissions``, ``unpack``, ``notebook``), the grading process
started before anything else is imported (``prestart``), and the check that the reference earns
full marks before anyone is graded against it (``trust``). The jobs (``batch``, ``release``,
``audit``) and the entry points (``workflows``) stand on it.
"""
