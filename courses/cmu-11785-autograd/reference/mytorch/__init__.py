"""mytorch: CMU 11-785's autograd, a tape of operations walked in reverse (this course's own
reference, written for the grader in the course's API)."""
