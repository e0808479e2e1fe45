"""Tests for attention_course/grading/run/sandbox/bubblewrap.py: the sandbox's command line, and whether one can run."""

import os
import pwd
import shutil
import stat
import sys
from pathlib import Path

import pytest

from attention_course.grading.run.sandbox import bubblewrap
from attention_course.grading.run.sandbox.bubblewrap import Bubblewrap, SandboxUnavailable

pytestmark = pytest.mark.sandbox

LIMITS = dict(memory_bytes=1 << 30, file_bytes=1 << 20, processes=32, scratch_bytes=1 << 24, info_fd=9)


def _pairs(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


def test_the_view_holds_python_and_the_package_but_never_the_checkout_around_it():
    view = bubblewrap._read_only_view()
    bound = [Path(p) for p in _pairs(view, "--ro-bind")]
    assert bubblewrap.package_dir() in bound
    for prefix in (sys.prefix, sys.base_prefix):
        assert any(Path(prefix) == b or b in Path(prefix).parents for b in bound) or prefix.startswith("/usr"), prefix
    root = bubblewrap.course_root()
    if root is not None:
        assert not any(b == root or b in root.parents for b in bound), "a folder around the checkout shows solutions/"
        assert (root / "solutions").exists() and not any("solutions" in b.parts for b in bound)


def test_every_parent_of_a_bound_folder_is_made_enterable_first():
    view = bubblewrap._read_only_view()
    made = {"/"}
    for i, arg in enumerate(view):
        if arg == "--dir":
            assert view[i - 2:i] == ["--perms", "0755"], view[i - 2:i + 2]
            made.add(view[i + 1])
        elif arg in ("--ro-bind", "--symlink"):
            target = Path(view[i + 2])
            for parent in target.parents:
                assert str(parent) in made, f"{parent} would be made 0700 by bwrap, before {target}"
            made.add(str(target))


def test_root_drops_to_an_unused_uid_and_any_other_user_gets_a_user_namespace():
    root = Bubblewrap("/usr/bin/bwrap", user_namespace=False).command(["python"], uid=1_234_567_890, **LIMITS)
    user = Bubblewrap("/usr/bin/bwrap", user_namespace=True).command(["python"], **LIMITS)
    assert "--unshare-user" not in root and "--reuid=1234567890" in root and "--no-new-privs" in root
    assert "--bounding-set=-all" in root and root.index("--cap-add") < root.index("--reuid=1234567890")
    assert "--unshare-user" in user and "--disable-userns" in user and not any("setpriv" in a for a in user)
    for command in (root, user):
        for flag in ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent", "--new-session"):
            assert flag in command
        assert command[-1] == "python" and "--as=1073741824" in command and "--nproc=32" in command
        assert "--fsize=1048576" in command and _pairs(command, "--info-fd") == ["9"]
        assert command.index("--remount-ro") > max(i for i, a in enumerate(command) if a in ("--ro-bind", "--tmpfs"))
    with pytest.raises(ValueError, match="uid"):
        Bubblewrap("/usr/bin/bwrap", user_namespace=False).command(["python"], **LIMITS)


def test_the_notebook_is_copied_in_under_a_safe_name():
    command = Bubblewrap("/usr/bin/bwrap", True).command(["python"], notebook=(7, "../../etc/.x b;c.ipynb"), **LIMITS)
    i = command.index("--file")
    assert command[i + 1] == "7" and command[i + 2] == f"{bubblewrap.WORK}/x b_c.ipynb"


def test_new_uids_belong_to_no_account():
    for _ in range(20):
        uid = bubblewrap.new_uid()
        assert 1_000_000_000 <= uid < 2_000_000_000
        with pytest.raises(KeyError):
            pwd.getpwuid(uid)


def test_without_bwrap_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(bubblewrap.shutil, "which", lambda name, path=None: None)
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        bubblewrap.find()
    assert bubblewrap.available() is None


def test_a_bwrap_that_cannot_make_a_sandbox_is_reported_with_its_own_message(tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    if shutil.which("prlimit", path="/usr/bin:/bin") is None:
        pytest.skip("prlimit (util-linux) is not installed")
    with pytest.raises(SandboxUnavailable, match="uid map: Permission denied"):
        bubblewrap._verified(str(fake), True)


@pytest.mark.skipif(bubblewrap.available() is None, reason="bubblewrap cannot run a sandbox here")
def test_find_returns_the_mode_this_user_needs():
    box = bubblewrap.find()
    assert box.user_namespace == (os.geteuid() != 0) and os.path.basename(box.executable) == "bwrap"
