"""A file's copy kept beside it before it is replaced (an exercise notebook a release replaces, a gradebook
written again)."""

from __future__ import annotations

import time
from pathlib import Path


def backup(path: Path) -> Path:
    """Copy `path` to `<name>.bak-<time>` beside it (never over an existing file); returns the copy's path."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    copy = path.with_name(f"{path.name}.bak-{stamp}")
    number = 1
    while copy.exists():
        number += 1
        copy = path.with_name(f"{path.name}.bak-{stamp}-{number}")
    copy.write_bytes(path.read_bytes())
    return copy
