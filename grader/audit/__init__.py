"""The rubric audit: how strong is a course's rubric? Mutants of the reference's solution
regions (``mutants``, with the operators the mutation library lacks in ``mutation_operators``)
are graded as a batch and each must cost the items its region serves; random programs run on
the reference and PyTorch find what no mutant shows (``differential``); each item's examples
are counted against the course's contract (``coverage``); ``audit`` runs them and judges.
"""
