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

# one pytest-xdist worker per core (TEST_WORKERS=0: in this process; two per core measured no faster once the
# serial tests run alone: 741 s against 734 s, benchmarks/README.md). Tests sharing one of
# our session or module fixtures stay on one worker (tests/conftest.py groups them), the others are spread one by
# one; then the tests marked serial (a real Slurm, network namespaces) alone: under the other tests' load Slurm
# killed job steps (exit 137) that pass alone. The summary names each serial test with its outcome and time.
TEST_WORKERS ?= auto
test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup -m "not serial"
	$(BIN)/python -m pytest -p no:xdist -m serial

clean:
	rm -rf $(VENV) runs demo-data .pytest_cache *.egg-info
