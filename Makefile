# Taskloom: `make demo` and `make test` each take a fresh machine from nothing to done.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
export FASTMCP_SHOW_SERVER_BANNER := false
export FASTMCP_CHECK_FOR_UPDATES := off
export ORT_DISABLE_TELEMETRY := 1
export ANONYMIZED_TELEMETRY := False

.PHONY: all setup system venv test-data test demo bench clean

all: test

## System packages (Debian), installed only when missing.
system:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  echo "installing chromium (Debian package)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium >/dev/null; \
	fi

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

setup: system venv

test-data:
	@bash tests/data/fetch-pdfs.sh

test: setup test-data
	$(BIN)/ruff check --quiet .
	$(BIN)/mypy server tools resources
	$(BIN)/pytest -n 2 --dist loadfile -q

demo: setup
	$(BIN)/taskloom demo

bench: setup test-data
	$(BIN)/python bench/ingest.py

clean:
	rm -rf $(VENV) .taskloom tests/data/cache .pytest_cache
