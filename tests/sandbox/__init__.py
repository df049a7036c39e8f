"""Running untrusted code: the launcher, its sandbox and limits, and the warm zygote's forks,
against fake runners (``grader/sandbox/``)."""
