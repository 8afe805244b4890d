# Eventide's developer commands. `make demo` and `make test` each set up .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: install demo test lint typecheck unit bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=2 $(BIN)/python -m pip install -q -e '.[all,dev,local-llm]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

install: $(STAMP)

## Run the example agent app (offline demo model, SQLite sessions in ./.eventide).
demo: $(STAMP)
	$(BIN)/python -m examples.support_desk

## Lint, type-check and run the whole test suite.
test: $(STAMP) lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples

typecheck: $(STAMP)
	$(BIN)/mypy
	$(BIN)/basedpyright

unit: $(STAMP)
	$(BIN)/pytest -q

## Benchmarks side by side with google-adk (installs the bench extra).
bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[bench]'
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
