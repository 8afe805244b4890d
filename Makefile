# Eventide's developer commands. `make demo` and `make test` each set up .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: install demo test lint typecheck unit bench bench-server bench-peers bench-workflow adk-conformance clean

# llama.cpp's server for the real-model tests (the local-llm extra) builds from source: only
# the libraries the Python server loads (6 min on 2 cores, measured at light load).
# GGML_NATIVE=OFF builds for AVX2 (+FMA, F16C, BMI2) instead of -march=native: a virtual
# machine may report AMX or AVX-512 in cpuid and still fault on them (SIGILL on the first
# AMX tile load, seen on a Xeon VM), and pip's cache may hand the wheel to another machine.
# The flags alone key pip's cache for this build, so a wheel built with other flags is not
# reused, while a change to pyproject.toml reinstalls from the cache without rebuilding.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
	-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAVA_BUILD=OFF
LLAMA_KEY := $(shell echo '$(LLAMA_CMAKE_ARGS)' | cksum | cut -d' ' -f1)
LLM_STAMP := $(VENV)/.local-llm-$(LLAMA_KEY)-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[all,dev]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

$(LLM_STAMP): $(STAMP)
	$(BIN)/python -m pip uninstall -q -y llama-cpp-python  # a build with other flags
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 \
		$(BIN)/python -m pip install -q --cache-dir "$${XDG_CACHE_HOME:-$$HOME/.cache}/pip-llama-$(LLAMA_KEY)" \
		-e '.[all,dev,local-llm]'
	rm -f $(VENV)/.local-llm-* && touch $(LLM_STAMP)

install: $(STAMP) $(LLM_STAMP)

## Run the example agent app (offline demo model, SQLite sessions in ./.eventide).
demo: $(STAMP)
	$(BIN)/python -m examples.support_desk

## Lint, type-check and run the whole test suite.
test: $(STAMP) $(LLM_STAMP) lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples compat
	$(BIN)/ruff format --check src tests benchmarks examples compat

typecheck: $(STAMP)
	$(BIN)/mypy
	$(BIN)/basedpyright --project pyproject.toml

unit: $(STAMP)
	$(BIN)/pytest -q

## Benchmarks side by side with google-adk, in their own venv: google-adk 2.13 pins older
## google-genai and OpenTelemetry releases than the dev venv's, so installing it there would
## downgrade what the tests run against.
BENCH_VENV := .venv-bench
bench:
	test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install -q --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install -q -e '.[all,bench]'
	$(BENCH_VENV)/bin/python -m benchmarks

## google-adk's interpreter for the benchmarks: .venv-adk (or EVENTIDE_ADK_PYTHON) with the A2A
## SDK beside it. Without it google-adk 2.13 tries to import its RemoteA2aAgent again every
## time it builds a node (a failed optional import is not cached): in every turn and every
## workflow node (a 3-agent pipeline on the fake model: about 6 ms a node without it, 2.7 ms
## with it, quick runs). The benchmarks measure google-adk at its fastest.
ADK_BENCH_PYTHON := $(BIN)/python -c "from tests.a2a.adk_a2a_env import adk_a2a_python; print(adk_a2a_python())"

## The HTTP server under load against `adk api_server`, side by side in one run: 200 SSE
## conversations x 10 turns, in memory and on PostgreSQL with two server processes
## (EVENTIDE_PG_URL, default postgres@127.0.0.1:5432/test). google-adk runs from
## EVENTIDE_ADK_PYTHON or .venv-adk (made here on first use), given asyncpg and SQLAlchemy
## for its PostgreSQL side. BENCH_ARGS=--quick for a short run.
BENCH_OUT ?= benchmarks/results/server_vs_adk.json
bench-server: $(STAMP)
	adk_python=$$($(ADK_BENCH_PYTHON)) && \
	$$adk_python -m pip install -q asyncpg 'sqlalchemy[asyncio]' && \
	$(BIN)/python benchmarks/bench_server_vs_adk.py --adk-python $$adk_python \
		--output $(BENCH_OUT) $(BENCH_ARGS)

## google-adk's own unit tests (v2.1.0, in ../shared/third_party) run on google-adk 2.13 and on
## Eventide through the import map; prints the table by area and writes the per-test results
## to compat/adk_unittests/results/latest.json (about 20 minutes on 2 cores; not in `make test`).
## google-adk runs from EVENTIDE_ADK_PYTHON or .venv-adk; ADK_CONFORMANCE_ARGS=--areas tools,...
adk-conformance: $(STAMP)
	adk_python=$$($(BIN)/python -c "from tests.adk_env import adk_python; print(adk_python())") && \
	EVENTIDE_ADK_PYTHON=$$adk_python PYTHONPATH=src:compat $(BIN)/python -m adk_unittests \
		$(ADK_CONFORMANCE_ARGS)

## The runtime scenarios (plain turn, tool turn) on Eventide, google-adk, openai-agents,
## pydantic-ai and LangGraph side by side in one run, each framework in a venv of its own
## under PEERS_VENVS (created here with pinned versions on first use). BENCH_ARGS=--quick
## for a short run, or e.g. --rounds 9.
PEERS_VENVS ?= .venv-peers
bench-peers: $(STAMP)
	$(BIN)/python benchmarks/bench_peers.py --setup --venvs $(PEERS_VENVS) $(BENCH_ARGS)

## Graph workflows (100-node chain, 1,000-node fan-out/join, 3-agent pipeline) on Eventide,
## google-adk 2.13's Workflow (.venv-adk) and LangGraph's StateGraph (PEERS_VENVS/langgraph),
## per node and peak memory per node, plus Eventide's resume of a crashed 1,000-node chain.
bench-workflow: $(STAMP)
	adk_python=$$($(ADK_BENCH_PYTHON)) && \
	$(BIN)/python -c 'from pathlib import Path; from benchmarks.bench_peers import setup; setup(Path("$(PEERS_VENVS)"))' && \
	EVENTIDE_ADK_PYTHON=$$adk_python $(BIN)/python benchmarks/bench_workflow.py --venvs $(PEERS_VENVS) $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
