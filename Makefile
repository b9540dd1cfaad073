# The two commands of the README, and friends. `make help` lists them.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
FUZZ_RUNS ?= 20000

.PHONY: help demo test test-rust test-python test-fuzz bench-analyze clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

demo: $(BIN)/python  ## install airtrace into .venv and run `airtrace demo`
	$(BIN)/pip install --quiet .
	$(BIN)/airtrace demo

test: $(BIN)/python  ## install the system tools and dev extras, run every test (cargo, then pytest)
	bash scripts/install-system-packages.sh
	$(BIN)/pip install --quiet -e '.[dev]'
	$(MAKE) test-rust test-python test-fuzz

test-rust:  ## cargo tests of every crate (the Python bindings are tested by pytest)
	cargo test --workspace --exclude airtrace-py --quiet

test-python:  ## pytest against the installed package
	$(BIN)/python -m pytest

test-fuzz:  ## every cargo-fuzz target for a fixed number of inputs (installs cargo-fuzz; nightly or RUSTC_BOOTSTRAP)
	bash scripts/fuzz-ci.sh --runs $(FUZZ_RUNS)

bench-analyze:  ## analyzer speed beside tcptrace and tshark (needs bench/out/bulk.pcap)
	$(BIN)/python bench/analyze_speed.py

clean:  ## remove build products and the virtual environment
	rm -rf target $(VENV) bench/out
