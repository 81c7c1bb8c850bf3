# Two entry points: `make demo` and `make test`. Both create .venv and install into it.
# Another interpreter gets its own environment: `make test PYTHON=python3.13 VENV=.venv-3.13`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# The project alone (what `make demo` needs), and the project with the test tools and the example
# plugin, a third-party plugin the tests install and run as users would (what `make test` needs).
PROJECT := $(VENV)/.installed-project
STAMP   := $(VENV)/.installed

.PHONY: demo test fixtures docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(PROJECT): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $(PROJECT)

$(STAMP): $(BIN)/python pyproject.toml plugins/mlperf-audit-example/pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]' -e plugins/mlperf-audit-example
	touch $(PROJECT) $(STAMP)

# Check the bundled fixture package whose findings are deliberate (fixtures/generate.py says which);
# --fail-on never: the demo shows the report and exits 0. The example plugin is the tests' (an
# environment `make test` set up holds it): the demo shows the tool's own rules.
demo: $(PROJECT)
	$(BIN)/mlperf-audit --disable-plugin example check fixtures/packages/demo --fail-on never

# The gates (mypy, ruff lint and format check, the import contracts) run inside pytest: tests/test_gates.py.
# The core suite loads only the built-in plugins; the example plugin's rule cases run in its own pytest
# session, through the pytest plugin mlperf-audit installs (its pyproject.toml names the case folder).
test: $(STAMP)
	$(BIN)/python -m pytest
	$(BIN)/python -m pytest plugins/mlperf-audit-example

# Regenerate the synthetic fixture packages (byte-identical on every machine).
fixtures: $(STAMP)
	$(BIN)/python fixtures/generate.py

# Regenerate the rule index and pages (docs/rules/) and docs/compliance-rules.md from the registered rules
# (tests/test_generated_docs.py fails when they are stale).
docs: $(STAMP)
	$(BIN)/python docs/generate.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache
