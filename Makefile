# Quick start: `make demo` (set up, then the tutorial's steps on the bundled example) and `make test`;
# then `. .venv/bin/activate` puts `simsample` on PATH.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
ADAPTERS := $(wildcard adapters/*/pyproject.toml)
STAMP  := $(VENV)/.installed

.PHONY: setup demo test test-slow docs clean

# The core and adapters/accelsim compile their C++ parts on install (scikit-build-core, pybind11:
# fetched by pip's build isolation); without a compiler both install as pure Python.
$(STAMP): pyproject.toml $(wildcard CMakeLists.txt) $(ADAPTERS) $(wildcard adapters/*/CMakeLists.txt)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,cluster,docs]' $(foreach a,$(ADAPTERS),-e $(dir $(a)))
	touch $@

# The tests exercise the optional GCL-Sampler too: torch and torch-geometric (the gcl extra).
GCL_STAMP := $(VENV)/.installed-gcl
$(GCL_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,cluster,docs,gcl]' $(foreach a,$(ADAPTERS),-e $(dir $(a)))
	touch $@

# The commands are installed into $(VENV)/bin: say how to reach them from the user's shell.
setup: $(STAMP)
	@echo "simsample is installed in $(VENV)/bin; to run it in this shell: . $(VENV)/bin/activate"

demo: setup
	PATH="$(abspath $(BIN)):$$PATH" bash examples/demo.sh
	@echo "simsample is installed in $(VENV)/bin; to run it in this shell: . $(VENV)/bin/activate"

# Under 10 minutes on 2 cores; its last lines say what was skipped and what would run it.
test: setup $(GCL_STAMP)
	$(BIN)/python -m pytest

# The long tests that make test leaves out (.ci/run runs both).
test-slow: setup $(GCL_STAMP)
	$(BIN)/python -m pytest -m slow

# The documentation site (mkdocs.yml, docs/), checked strictly: a broken link or a missing page fails.
docs: setup
	$(BIN)/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) demo-out build _skbuild site
