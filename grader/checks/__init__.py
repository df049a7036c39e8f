"""The checks: the only place where a student's answers meet expectations.

Each check runs one pipeline: ask the worker (a probe on the student's engine) -> decode the
plain numbers it returns -> expect (an oracle, or the grader's own model) -> compare within the
rubric's tolerance -> confirm a mismatch with a second oracle -> diagnose a named bug -> draw the
counterexample. A wrong answer raises ``WrongAnswer`` with a runnable snippet in the student's
own API; Hypothesis then shrinks it. One module per kind of check, each with its snippet beside
it: ``graphs`` (whole graphs, and the routing/sugar variants), ``ops`` (one op alone), ``walks``
(build_topo, backward(), zero_grad, Tensor.backward and their cost), ``accumulation`` (+= in
every closure, the ledger), ``broadcasting`` (the reduction alone).
"""
