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
	$(BIN)/python -m pip install --quiet -e '.[test,demo,postgres,grpc,cmaes,determined-scripts,candle,ui]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m playground.commands.demo

# pytest-xdist workers: one per core and one more (TEST_WORKERS=0: in this process). A quarter of a worker's time
# is waiting (a grace period, a sweep agent's poll, a hung rank's timeout): the extra worker computes meanwhile
# (2 cores: 513 s instead of 634 s), and each worker's processes compute with cores // workers threads
# (tests/conftest.py), so they do not spin against each other. Tests sharing one of our session or module
# fixtures stay on one worker (tests/conftest.py groups them), the others are spread one by one. The tests marked
# serial (a real Slurm, network namespaces), which mostly wait on Slurm, run one after the other in a second pytest
# beside them; their report follows the others'. Test processes of the command line are forked from an interpreter
# that has imported torch (tests/zygote.py; PLAYGROUND_TEST_ZYGOTE=0: each a fresh interpreter).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: $(STAMP)
	@serial_log=$$(mktemp); \
	$(BIN)/python -m pytest -p no:xdist -p no:cacheprovider -m serial > $$serial_log 2>&1 & serial=$$!; \
	trap 'kill $$serial 2>/dev/null; rm -f $$serial_log' INT TERM; \
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup -m "not serial"; others=$$?; \
	wait $$serial; serial_code=$$?; \
	echo "==== the tests marked serial (a real Slurm, network namespaces), run beside the others: exit $$serial_code"; \
	cat $$serial_log; rm -f $$serial_log; \
	[ $$others -eq 0 ] && [ $$serial_code -eq 0 ]

clean:
	rm -rf $(VENV) runs demo-data .pytest_cache *.egg-info
