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

.PHONY: all setup system venv test-data bench-data test test-fast demo bench clean

all: test

## System packages (Debian), installed only when missing: chromium for the browser layer,
## chromium-headless-shell (the same engine without its window layer: headless runs spend about a third less CPU), Xvfb + xauth + x11-utils for the opt-in desktop environment, npm to fetch TodoMVC for the crawl tests,
## bubblewrap to sandbox command agents when the harness does not run as root, python3.11-doc (the Python
## documentation, a large real site the crawl tests serve on 127.0.0.1); dbus-daemon, openbox, mousepad, at-spi2-core,
## python3-gi and gir1.2-atspi-2.0 for desktop episodes running an application (accessibility snapshots);
## texlive-latex-recommended (pdflatex, booktabs) to typeset the tables and T1 text the PDF tests read back.
APT_NEEDS := pdflatex:texlive-latex-recommended chromium:chromium chromium-headless-shell:chromium-headless-shell Xvfb:xvfb xauth:xauth xdpyinfo:x11-utils npm:npm bwrap:bubblewrap dbus-daemon:dbus-daemon openbox:openbox mousepad:mousepad pcmanfm:pcmanfm xprop:x11-utils gnumeric:gnumeric
APT_FILES := /usr/share/doc/python3.11/html/library/stdtypes.html:python3.11-doc /usr/libexec/at-spi-bus-launcher:at-spi2-core /usr/lib/python3/dist-packages/gi/__init__.py:python3-gi /usr/lib/*/girepository-1.0/Atspi-2.0.typelib:gir1.2-atspi-2.0 /usr/lib/*/gtk-2.0/modules/libatk-bridge.so:libatk-adaptor
system:
	@missing=""; for pair in $(APT_NEEDS); do command -v $${pair%%:*} >/dev/null 2>&1 || missing="$$missing $${pair##*:}"; done; \
	for pair in $(APT_FILES); do [ -e $${pair%%:*} ] || missing="$$missing $${pair##*:}"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

## Material only the benchmarks read (examples/build/full.toml, timed by bench/build.py): the pandas documentation
## (python-pandas-doc, 270 MB, a large Sphinx site) and R's HTML manuals (r-doc-html); `make test` does not need them.
APT_BENCH := /usr/share/doc/python-pandas-doc/html/index.html:python-pandas-doc /usr/share/R/doc/manual/R-FAQ.html:r-doc-html
bench-data: test-data
	@missing=""; for pair in $(APT_BENCH); do [ -e $${pair%%:*} ] || missing="$$missing $${pair##*:}"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

setup: system venv

test-data: venv
	@bash tests/data/fetch-pdfs.sh
	@bash tests/data/fetch-todomvc.sh
	@bash tests/data/fetch-playwright-mcp.sh
	@bash tests/data/fetch-mcp-inspector.sh
	@$(BIN)/python tests/tools/harbor_side.py
	@PYTHON=$(PYTHON) bash tests/data/build-browser-use-logs.sh
	@$(BIN)/python tests/data/build-penguins.py
	@PYTHON=$(PYTHON) bash tests/data/build-trac.sh
	@PYTHON=$(PYTHON) bash tests/data/build-roundup.sh

## One test worker more than the machine has cores: the tests wait (on browsers, servers, clusters) about a sixth of
## their time, which a third worker on 2 cores fills (1,393 s instead of 1,684 s for the whole suite, bench/README.md).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))

test: setup test-data
	$(BIN)/ruff check --quiet .
	@mkdir -p $(VENV)/typecheck && ln -sfn $(CURDIR) $(VENV)/typecheck/taskloom
	MYPYPATH=$(VENV)/typecheck $(BIN)/mypy -p taskloom.server -p taskloom.tools -p taskloom.resources -p taskloom.prompts -p taskloom.harness
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -q --durations=30

## The unit tier only (no `slow`, no `integration` tests: nothing that starts a browser, a server, a display or a
## cluster): a quick check while working; `make test` runs every tier.
test-fast: setup test-data
	$(BIN)/ruff check --quiet .
	$(BIN)/pytest -n 2 --dist loadfile --no-loadscope-reorder -q -m "not slow and not integration"

demo: setup
	$(BIN)/taskloom demo

bench: setup bench-data
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/crawl.py
	$(BIN)/python bench/generate.py
	$(BIN)/python bench/consensus.py

clean:
	rm -rf $(VENV) .taskloom tests/data/cache .pytest_cache
