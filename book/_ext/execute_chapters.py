"""Run the book's chapters side by side into Jupyter Book's execution cache, before the build reads them.

    python book/_ext/execute_chapters.py _build/.jupyter_cache

Jupyter Book 1 (myst-nb's `cache` mode) runs each chapter that has changed one
after the other, as Sphinx reads it: about 80 s on two cores, one of them idle.
`make book` runs this first: the same notebooks (the `.ipynb` files `_toc.yml`
lists), each in its own folder, under `_config.yml`'s `execute:` settings
(`timeout`, `allow_errors`), with jupyter-cache's parallel executor (one process
per core), into the cache the build reads. The build then finds every chapter
cached, by the same hash of its code cells, and only renders it.

A chapter that fails here is not cached, and this says which: the build then
runs it again itself and fails with its usual message, so nothing is hidden and
nothing is skipped. A chapter already cached is not run again.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import yaml
from jupyter_cache import get_cache
from jupyter_cache.executors import load_executor

ROOT = Path(__file__).resolve().parents[2]


def chapters(toc: dict) -> list[Path]:
    """The notebooks `_toc.yml` lists (its root and every chapter), in its order."""
    files = [toc["root"], *(c["file"] for part in toc.get("parts", []) for c in part.get("chapters", []))]
    return [ROOT / f"{f}.ipynb" for f in files if (ROOT / f"{f}.ipynb").is_file()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cache", type=Path, help="Jupyter Book's execution cache (_build/.jupyter_cache)")
    args = parser.parse_args(argv)
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    execute = config.get("execute", {})
    if execute.get("execute_notebooks", "auto") != "cache":
        print("execute_chapters: _config.yml does not execute into a cache (execute_notebooks: cache): nothing to do")
        return 0
    notebooks = chapters(yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8")))
    cache = get_cache(args.cache)
    for path in notebooks:
        cache.add_nb_to_project(str(path))
    uris = [str(p) for p in notebooks]
    logger = logging.getLogger("execute_chapters")
    logger.addHandler(logging.StreamHandler(sys.stdout))
    logger.setLevel(logging.WARNING)
    result = load_executor("local-parallel", cache, logger=logger).run_and_cache(
        filter_uris=uris, timeout=execute.get("timeout", 30), allow_errors=execute.get("allow_errors", False))
    ran = len(result.succeeded) + len(result.excepted) + len(result.errored)
    print(f"execute_chapters: {len(notebooks) - ran} of {len(notebooks)} chapters already cached; "
          f"{len(result.succeeded)} run side by side and cached")
    for uri in [*result.excepted, *result.errored]:
        print(f"execute_chapters: {Path(uri).relative_to(ROOT)} failed: the build runs it again and says why")
    return 0


if __name__ == "__main__":
    sys.exit(main())
