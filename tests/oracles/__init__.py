"""The oracles that say what a right answer is, and the reference engines they are checked on
(``grader/oracles/``)."""
