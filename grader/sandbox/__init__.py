"""Running untrusted code: the sandbox (bubblewrap, or the unconfined fallback), its limits,
the processes it starts (alone, or forked by a warm zygote), their framed channel and output.
It knows nothing of autograd engines or probes: ``grader.worker`` says what a worker runs."""
