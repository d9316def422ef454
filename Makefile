# The two commands a newcomer types: `make demo` and `make test`. Each creates .venv and installs the
# project into it first when the venv is missing or older than the package metadata.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test venv bench clean

$(STAMP): setup.cfg pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "playground needs Python >= 3.11; set PYTHON=python3.11")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e '.[test,demo,postgres,grpc,cmaes,determined-scripts]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m playground.commands.demo

# one pytest-xdist worker per core (TEST_WORKERS=0: in this process); tests sharing one of our session or module
# fixtures stay on one worker (tests/conftest.py groups them), the others are spread one by one; then the tests
# marked serial (a real Slurm, network namespaces) alone, where no other test's load shifts their timing, each
# named in the log with its outcome and its time
TEST_WORKERS ?= auto
test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup -m "not serial"
	$(BIN)/python -m pytest -p no:xdist -m serial -v --durations=0

clean:
	rm -rf $(VENV) runs demo-data .pytest_cache *.egg-info
