"""The repository's shape: the package's floors, the tests' folders, the README and the
documentation."""
