"""The release cut for students: stubs, Gradescope's zip, what must not leak, the install
(``grader/release/``)."""
