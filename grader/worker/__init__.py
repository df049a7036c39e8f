"""The only place student code runs: a sandboxed subprocess that answers requests."""
