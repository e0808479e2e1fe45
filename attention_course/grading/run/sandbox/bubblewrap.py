"""The bubblewrap sandbox around one worker process (`bwrap`, Flatpak's sandbox).

A worker runs in new PID, network, IPC and UTS namespaces (and a cgroup one
where the kernel allows it). It sees, read-only, only the system folders
(`/usr` and the library folders), the Python interpreter and its environment
and the course package itself (never the checkout around it, which holds
`solutions/`), and it writes only into a small tmpfs of its own, `/sandbox`
(`work/` holds a copy of its notebook; `home/` and `tmp/`). Its limits (address
space, file size, processes) are set by `prlimit` before Python starts, so
nothing inside can raise them, and the grader kills the whole sandbox through
its PID namespace's first process when time runs out. That first process
is bwrap itself, and /proc shows its command line to everything inside: its
options (every folder bound, the grader's own paths) are therefore handed to
it through a memory file (`--args`, `Bubblewrap.hidden`), never on its
command line, which keeps only the worker's command.

As root (CI, a grading server) there is no user namespace: the worker drops to
an unused uid with `setpriv` inside the sandbox, so it can read nothing that is
only root's, and its process limit counts its own processes only. As any other
user (an instructor's laptop), bwrap needs a user namespace and the worker
keeps that user's uid, so nothing of their home is bound but what Python needs.
"""

from __future__ import annotations

import functools
import os
import pwd
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

SCRATCH = "/sandbox"
"""The worker's writable tmpfs inside the sandbox."""
WORK = f"{SCRATCH}/work"
"""The worker's working folder (it holds the copy of its notebook)."""
HOME = f"{SCRATCH}/home"
TMP = f"{SCRATCH}/tmp"

INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install "
                "bubblewrap; Arch: sudo pacman -S bubblewrap)")

_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = ("/etc/ld.so.cache",)  # where the dynamic linker finds the system's libraries
_SANDBOX_UIDS = (1_000_000_000, 2_000_000_000)
"""Root drops each worker to a fresh uid drawn from this range (one with no account)."""


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing, or it cannot create a sandbox on this machine."""


@dataclass(frozen=True)
class Bubblewrap:
    """How each worker is isolated: the bwrap executable and whether it needs a user namespace."""

    executable: str
    """Path of `bwrap`."""
    user_namespace: bool
    """True when the grader is not root: the sandbox gets a user namespace and keeps the grader's uid."""

    def command(self, argv: list[str], *, memory_bytes: int, file_bytes: int, processes: int, scratch_bytes: int,
                info_fd: int, notebook: tuple[int, str] | None = None, uid: int | None = None) -> list[str]:
        """The bwrap command line that runs `argv` inside the sandbox.

        `info_fd` receives bwrap's JSON (the outer pid of the sandbox's first
        process); `notebook` is (a readable descriptor, a file name) copied into
        `WORK`; `uid` is the unprivileged uid a root grader drops to.
        """
        args = [self.executable, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--hostname", "sandbox"]
        if self.user_namespace:
            args += ["--unshare-user", "--disable-userns"]
        args += _read_only_view()
        args += ["--proc", "/proc", "--dev", "/dev",
                 "--size", str(scratch_bytes), "--perms", "0755", "--tmpfs", SCRATCH]
        for folder in (WORK, HOME, TMP):
            args += ["--perms", "0777", "--dir", folder]
        if notebook is not None:
            fd, name = notebook
            args += ["--perms", "0644", "--file", str(fd), f"{WORK}/{safe_name(name)}"]
        args += ["--remount-ro", "/", "--chdir", WORK, "--info-fd", str(info_fd)]
        limits = [_prlimit(), f"--as={memory_bytes}", f"--fsize={file_bytes}", f"--nproc={processes}", "--core=0",
                  "--"]
        if self.user_namespace:
            return args + limits + argv
        if uid is None:
            raise ValueError("uid: a root grader needs an unprivileged uid for the worker, got None")
        drop = [_setpriv(), f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                "--bounding-set=-all", "--no-new-privs", "--"]
        return args + ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"] + limits + drop + argv


    def hidden(self, command: list[str]) -> tuple[list[str], int]:
        """`command` (as `command` writes it) with bwrap's options moved into a memory file that bwrap reads
        (`--args FD`), so that the sandbox's process 1 shows none of them; and that file's descriptor, to pass to
        bwrap and close once it has started."""
        cut = command.index(_prlimit())
        fd = os.memfd_create("bwrap-options", 0)  # inheritable only through pass_fds
        try:
            os.write(fd, b"".join(arg.encode() + b"\0" for arg in command[1:cut]))
            os.lseek(fd, 0, os.SEEK_SET)
        except OSError:
            os.close(fd)
            raise
        return [command[0], "--args", str(fd), *command[cut:]], fd


def find() -> Bubblewrap:
    """The bubblewrap this machine can use; SandboxUnavailable says why not and how to fix it."""
    executable = shutil.which("bwrap")
    if executable is None:
        raise SandboxUnavailable(f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}")
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable("bubblewrap runs on Linux only")
    return _verified(executable, os.geteuid() != 0)


def available() -> Bubblewrap | None:
    """`find()`, or None where bubblewrap cannot be used."""
    try:
        return find()
    except SandboxUnavailable:
        return None


@functools.lru_cache(maxsize=None)
def _verified(executable: str, user_namespace: bool) -> Bubblewrap:
    """Start one sandbox as the workers will (once per process) and check it is isolated."""
    box = Bubblewrap(executable, user_namespace)
    for tool in (_prlimit, _setpriv):
        if tool() is None:
            raise SandboxUnavailable(f"{tool.__name__.strip('_')} (util-linux) is missing; it sets the sandbox's limits")
    probe = ("import os, socket; assert os.getpid() <= 2, os.getpid(); "
             "assert [n for _, n in socket.if_nameindex()] == ['lo']; print('isolated')")
    read, write = os.pipe()
    try:
        # -I -S: the probe needs the standard library alone, so it skips the environment's site-packages and .pth files
        command = box.command([sys.executable, "-I", "-S", "-B", "-c", probe], memory_bytes=1 << 30, file_bytes=1 << 20,
                              processes=16, scratch_bytes=1 << 20, info_fd=write, uid=new_uid())
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                              pass_fds=(write,))
    except (OSError, subprocess.TimeoutExpired) as err:
        raise SandboxUnavailable(f"bubblewrap could not start a sandbox: {err}") from None
    finally:
        os.close(read)
        os.close(write)
    if done.returncode != 0 or done.stdout.strip() != "isolated":
        message = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise SandboxUnavailable(f"bubblewrap is installed but could not start an isolated sandbox here: {message}")
    return box


def new_uid() -> int:
    """An unused uid for one worker of a root grader (no account has it)."""
    while True:
        uid = _SANDBOX_UIDS[0] + secrets.randbelow(_SANDBOX_UIDS[1] - _SANDBOX_UIDS[0])
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid


def package_dir() -> Path:
    """The folder of the installed `attention_course` package."""
    import attention_course

    return Path(attention_course.__file__).resolve().parent


def course_root() -> Path | None:
    """The checkout the package is imported from (it holds solutions/), or None for an installed package."""
    parent = package_dir().parent
    if any(_inside(parent, p) for p in _prefixes()):
        return None  # site-packages of an environment
    return parent


def visible() -> list[str]:
    """What a worker sees of the machine besides its own /sandbox: the folders bound read-only, /proc and /dev."""
    system = [p for p in _SYSTEM if os.path.isdir(p)]
    return system + [p for p in _ETC if os.path.exists(p)] + _python_folders() + ["/proc", "/dev"]


def _read_only_view() -> list[str]:
    """bwrap arguments binding, read-only, what Python and the package need (and nothing of the checkout)."""
    args: list[str] = []
    made: set[str] = {"/"}

    def parents(path: str) -> None:
        # bwrap makes missing parent folders with mode 0700, which an unprivileged worker cannot enter.
        for parent in reversed(Path(path).parents):
            p = str(parent)
            if p not in made:
                made.add(p)
                args.extend(["--perms", "0755", "--dir", p])

    for path in _SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in _ETC:
        if os.path.exists(path):
            parents(path)
            args += ["--ro-bind", path, path]
    for path in _python_folders():
        parents(path)
        args += ["--ro-bind", path, path]
        made.add(path)
    return args


def _python_folders() -> list[str]:
    """The interpreter's prefixes, the environment and the package; nested folders are dropped."""
    wanted = [Path(p) for p in _prefixes()] + [package_dir()]
    real = [Path(os.path.realpath(p)) for p in wanted]
    root = course_root()
    folders: list[str] = []
    for path in sorted({*wanted, *real}, key=lambda p: len(p.parts)):
        if not path.is_dir() or any(_inside(path, f) for f in folders) or _inside(path, "/usr"):
            continue
        if root is not None and _inside(root, path):
            continue  # a folder around the checkout would show solutions/
        folders.append(str(path))
    return folders


def _prefixes() -> list[str]:
    return list(dict.fromkeys([sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]))


def _inside(path: Path | str, folder: Path | str) -> bool:
    path, folder = Path(path), Path(folder)
    return path == folder or folder in path.parents


def safe_name(name: str) -> str:
    """A notebook's file name as the worker's copy is called: letters, digits, spaces and ._- kept, the rest `_`."""
    name = "".join(c if c.isalnum() or c in "._- " else "_" for c in Path(name).name)
    return name.lstrip(".") or "notebook.ipynb"


def _prlimit() -> str | None:
    return shutil.which("prlimit", path="/usr/bin:/bin")


def _setpriv() -> str | None:
    return shutil.which("setpriv", path="/usr/bin:/bin")
