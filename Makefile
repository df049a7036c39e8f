# Two commands do all the set-up: `make grade` and `make test` create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SUBMISSION ?= exercises
ASSIGNMENT ?= all
ARGS ?=

.PHONY: grade watch test check bench audit self-audit stubs lint clean release gradescope docs

# PyTorch, a third oracle some tests compare with: torch==2.13.0 resolves to the CPU build on
# this machine's disk. TORCH= leaves it out (those tests skip and say so).
TORCH ?= torch==2.13.0
# make release and make gradescope need only the grader: the development venv as it is when it
# is there, else a venv of the grader alone (no PyTorch, no development tools), made on first use.
GRADER_VENV ?= .venv-grader
INSTRUCTOR_NEEDS := $(if $(wildcard $(STAMP)),,$(GRADER_VENV)/.installed)
INSTRUCTOR_PY := $(if $(wildcard $(STAMP)),$(PY),$(GRADER_VENV)/bin/python)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,cluster,audit,docs]' $(TORCH)
	touch $(STAMP)

$(GRADER_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(GRADER_VENV)
	$(GRADER_VENV)/bin/python -m pip install -q --upgrade pip
	$(GRADER_VENV)/bin/python -m pip install -q -e .
	touch $@

# Grade SUBMISSION; COURSE= grades it as another course does (a shipped one by name, or a
# course folder: make grade COURSE=cmu-11785-autograd SUBMISSION=path/to/handout).
grade: $(STAMP)
	$(PY) -m grader grade --submission $(SUBMISSION) --assignment $(ASSIGNMENT) $(if $(COURSE),--course $(COURSE)) $(foreach item,$(ONLY),--only $(item)) $(ARGS)

# Re-grade the changed assignment on every save; prints what newly passes or fails.
watch: $(STAMP)
	$(PY) -m grader watch --submission $(SUBMISSION) --assignment $(ASSIGNMENT) $(foreach item,$(ONLY),--only $(item))

# The tests on every core (pytest-xdist); tests that share a costly fixture keep to one worker
# (xdist_group). ARGS: more pytest arguments.
test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -n auto --dist loadgroup $(ARGS)

# The quick half: every test not marked slow, in a few minutes.
check: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m pytest -n auto --dist loadgroup -m "not slow" $(ARGS)

bench: $(STAMP)
	$(PY) -m grader.workflows.bench $(ARGS)

# How strong is the rubric? Every mutant of reference/ graded (audit/audit.html).
audit: $(STAMP)
	$(PY) -m grader audit --out audit $(ARGS)

# Do the project's tests notice a broken grader? Every mutant of what decides trust and points
# against its module's tests (tests/self_audit.py; make test runs a sample). MODULE: some of it.
self-audit: $(STAMP)
	$(PY) -m tests.self_audit $(foreach module,$(MODULE),--module $(module)) $(ARGS)

stubs: $(STAMP)
	$(PY) -m grader.release.stubs

release: $(INSTRUCTOR_NEEDS)
	$(INSTRUCTOR_PY) -m grader.release.release student --out dist/student

gradescope: $(INSTRUCTOR_NEEDS)
	$(INSTRUCTOR_PY) -m grader.release.release gradescope --out dist/gradescope $(if $(SEED),--seed $(SEED)) $(if $(COURSE),--course $(COURSE))

# The documentation site (mkdocs.yml, docs/) into site/; a warning (a broken link) fails it.
docs: $(STAMP)
	$(PY) -m mkdocs build --strict --site-dir site

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

clean:
	rm -rf $(VENV) $(GRADER_VENV) dist build site *.egg-info
