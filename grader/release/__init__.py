"""The release: what students and graders receive. The students' stubs written from the
reference (``stubs``), the student repository and the Gradescope autograder built from them
(``release``, with ``templates/``; ``autograder`` is what runs on Gradescope), and the probe
that proves no release holds code that solves an item (``leak_probe``).
"""
