"""What a notebook tries, seen from inside its worker: an audit hook, snapshots and a profiler.

The sandbox keeps a notebook from reaching anything outside it; this module
tells the instructor what it tried, so that nothing it does is silent. The
worker sets up one `Watch` before the first cell runs:

- an audit hook (PEP 578: once added, nothing can remove it) notes signals
  sent to other processes, network connections and name lookups, processes
  started, files written outside the worker's own folder, course files read
  or listed that the notebook was not given (the checkout, `solutions/`, the
  other submissions, the package's sources), and other files outside the
  sandbox's view that its own code opens;
- snapshots of the course's modules show code replaced in the worker (the
  grading internals, the package's functions), and of numpy's functions;
- while the grader's calls run, a profiler notes every function of the course
  package entered from the notebook's own code, beyond those the exercise
  provides. The notebook can hold the profiler (`sys.getprofile()`), so it
  keeps no record of its own: it raises an audit event for each such call,
  and the audit hook keeps the count where the notebook cannot reach it; what
  the profiler reads is bound in its defaults, whose change is audited too;
- the ways into the process's own frames and objects (`gc.get_objects`,
  `sys._getframe`, a traceback's frame, a tracer, the frames the `traceback`
  module's walks and `logging.currentframe` hand out, the interpreter's C API
  and memory at an address through `ctypes`), by which a notebook could reach
  the worker's state and this watch itself, are noted as the notebook's code
  takes them: the finding is sent before the notebook holds what it asked for;
- threads: when the notebook's threads alone fill the sandbox's limit of
  processes (a thread is one to the kernel), that is said as a fork bomb's is;
- an exception Python cannot raise (in a function run at a fork, a finaliser)
  is printed as one line, its type and message: the default would print the
  grader's own source lines into the notebook's output, and its reading of
  those files would look like the notebook's.

Each finding goes to `report(kind, detail)` (its kind a `status.Finding`); the worker sends it to the grader,
which decides, outside, what it means.
"""

from __future__ import annotations

import gc
import inspect
import logging
import operator
import os
import shlex
import signal
import socket
import sys
import threading
import traceback
import types
from contextlib import contextmanager
from typing import Callable

from ..status import Finding

COURSE_CALL = "attention_course.sandbox.course_call"
"""The audit event the calls' profiler raises for each course function the notebook's code enters (see
`_calls_profile`): a notebook raising it itself only reports itself."""

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")
_STREAMS = ("/dev/fd/", "/proc/self/fd/")
_NUMPY_MODULES = ("numpy", "numpy.linalg", "numpy.testing", "numpy.random")
_IPYTHON_BUILTINS = {"display", "get_ipython", "exit", "quit", "help", "copyright", "credits", "license"}
_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep  # the sandbox's own modules
_FRAME_ATTRIBUTES = ("tb_frame", "gi_frame", "cr_frame", "ag_frame")
"""Attributes that hand out a frame (of a traceback, a generator, a coroutine), whose `f_back` leads to the worker's."""


class Watch:
    """The audit hook, the snapshots and the calls' profiler of one worker (see the module docstring)."""

    def __init__(self, report: Callable[[str, str], None], *, writable: list[str], course: list[str],
                 visible: list[str], provided: list[str], processes: int | None = None):
        import attention_course

        self._report = report
        self._pid = os.getpid()
        self._writable = tuple(_folder(p) for p in writable)
        self._course = tuple(_folder(p) for p in course)
        self._visible = tuple(_folder(p) for p in visible)
        self._wrappers = (_folder(os.path.dirname(os.__file__)), _folder(_ipython_folder()))
        self._package = _folder(os.path.dirname(os.path.abspath(attention_course.__file__)))
        prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
        self._libraries = tuple(_folder(p) for p in prefixes | {os.path.realpath(p) for p in prefixes}) + (
            self._package, "<frozen ")
        self._allowed = _allowed_code(attention_course, provided)
        self._processes = processes  # the sandbox's limit of processes (threads included), if it has one
        self._threads_full = False
        self._modules: dict[str, types.ModuleType] = {}
        self._state: dict[str, tuple] = {}
        self._read_from: tuple[list, list] = ([], [])  # the namespaces and functions `_state` was read from
        self._identities: list = []  # what `_identities_now` gave when `_state` was taken
        self._calling = False  # whether a grader's call runs: the course functions entered are counted
        self._found: dict[str, int] = {}  # course function -> calls entered from the notebook's code, this call
        self._own_setprofile = False
        self._setprofile_seen = False
        self._profile = _calls_profile(self._package, self._libraries, self._allowed)  # the main thread's and threads'

    # --- the audit hook -------------------------------------------------------------------------------

    def install(self) -> None:
        """Add the audit hook (for the rest of the process's life), snapshot the course's modules, and give every
        thread the notebook starts the calls' profiler (a helper thread started in a cell is watched as well)."""
        self.snapshot()
        sys.addaudithook(self._hook)
        threading.setprofile(self._profile)
        sys.unraisablehook = _unraisable


    def _hook(self, event: str, args: tuple) -> None:
        handler = _HANDLERS.get(event)
        if handler is None or os.getpid() != self._pid:  # a forked child reports nothing
            return
        try:
            handler(self, event, args)
        except Exception:  # noqa: BLE001 -- the hook must never change what the notebook's code does
            pass

    def _signal(self, event: str, args: tuple) -> None:
        target, number = args[0], args[1]
        if event == "os.kill" and (target == self._pid or _descends(target, self._pid)):
            return  # its own process, or one it started: the notebook may stop what it started
        name = _signal_name(number)
        if event == "os.killpg":
            self._report(Finding.SIGNAL, f"{name} to process group {target}")
        else:
            whose = {os.getppid(): " (its parent)", 0: " (its own process group)",
                     -1: " (every process it may signal)"}.get(target, "")
            self._report(Finding.SIGNAL, f"{name} to process {target}{whose}")

    def _network(self, event: str, args: tuple) -> None:
        if event == "socket.bind":
            sock, address = args[0], args[1]
            if getattr(sock, "family", None) not in (socket.AF_INET, socket.AF_INET6):
                return
            self._report(Finding.NETWORK, f"listen on {_address(address)}")
        elif event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
            verb = "connect to" if event == "socket.connect" else "send to"
            self._report(Finding.NETWORK, f"{verb} {_address(args[1])}")
        elif event.startswith("socket."):
            self._report(Finding.NETWORK, f"look up {_address(args[0])}")
        elif event == "urllib.Request":
            self._report(Finding.NETWORK, f"open {str(args[0])[:150]}")
        else:
            self._report(Finding.NETWORK, f"connect to {_address(args[1:3])}")

    def _process(self, event: str, args: tuple) -> None:
        if not self._by_notebook(direct=True):
            return  # a library's own helper, such as matplotlib's fc-list
        if event in ("os.fork", "os.forkpty"):
            command = f"{event}()"
        elif event == "os.system":
            command = _text(args[0])
        elif event == "subprocess.Popen":
            command = _command(args[1])
        elif event == "os.spawn":
            command = _command(args[2])
        else:  # os.exec, os.posix_spawn: (path, argv, env); pty.spawn: (argv,)
            command = _command(args[1] if len(args) > 1 else args[0])
        self._report(Finding.PROCESS, f"`{command[:150]}`")
        if any(root.rstrip(os.sep) in command for root in self._course) or "solutions" in command:
            self._report(Finding.READ, f"ran `{command[:150]}`")

    def _open(self, event: str, args: tuple) -> None:
        path, mode, flags = args[0], args[1], args[2]
        if isinstance(path, int):
            return
        full = _absolute(path)
        writing = any(c in mode for c in "wax+") if isinstance(mode, str) else bool((flags or 0) & _WRITE_FLAGS)
        if writing:
            self._check_write(full, "write")
        else:
            self._check_read(full, "read")

    def _paths(self, event: str, args: tuple) -> None:
        verb = event.split(".", 1)[1]
        if event in ("os.rename", "shutil.move"):
            writes = args[:2]
        elif event in ("os.link", "os.symlink", "shutil.copyfile", "shutil.copymode", "shutil.copystat",
                       "shutil.copytree"):
            writes = args[1:2]
            self._check_read(_absolute(args[0]), verb)
        else:
            writes = args[:1]
        for path in writes:
            if not isinstance(path, int):
                self._check_write(_absolute(path), verb)

    def _listing(self, event: str, args: tuple) -> None:
        path = args[0] if args and args[0] is not None else "."
        if not isinstance(path, int):
            self._check_read(_absolute(path), "list" if event != "os.chdir" else "chdir to")

    def _setprofile(self, event: str, args: tuple) -> None:
        if self._own_setprofile:
            return
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename == __file__:
            frame = frame.f_back
        if frame is not None and frame.f_code.co_filename == threading.__file__ and sys.getprofile() is None:
            self._count_threads()  # a thread starting: threading gives it the profile set in `install`
            return
        if not self._calling:
            return
        # Told at the call's end, if it returned: Python itself removes a profiler that raised (the time
        # limit's alarm, a RecursionError landing in it), which is no one's doing.
        self._setprofile_seen = True

    def _course_call(self, event: str, args: tuple) -> None:
        """The calls' profiler saw the notebook's code enter a course function (`args[0]` names it)."""
        if self._calling and isinstance(args[0], str):
            self._found[args[0]] = self._found.get(args[0], 0) + 1

    def _setattr(self, event: str, args: tuple) -> None:
        """A function's code or defaults replaced: the calls' profiler's are what it reads."""
        if args[0] is self._profile:
            self._report(Finding.TAMPER, f"the grader's profiler's `{args[1]}` (it watches the calls)")

    def _ctypes(self, event: str, args: tuple) -> None:
        """`ctypes` asked for the interpreter's own C functions or for memory at an address, by the notebook's code."""
        if event.startswith("ctypes.dlsym"):
            name = args[1] if isinstance(args[1], str) else ""
            if not name.startswith(("Py", "_Py")):
                return  # a C library's function, not the interpreter's
            detail = f"`ctypes`: the interpreter's {name}"
        elif isinstance(args[0], int) and 0 <= args[0] < 1 << 16:
            return  # the first pages, never mapped: it crashes the process, reaching nothing (a segfault said as one)
        else:
            detail = "`ctypes`: memory at an address"
        if self._by_notebook(direct=True):
            self._report(Finding.INTROSPECT, detail)

    def _count_threads(self) -> None:
        """Say so when the notebook's threads, with the main one, fill the sandbox's limit of processes."""
        import _thread

        full = self._processes is not None and _thread._count() + 1 >= self._processes
        if full and not self._threads_full:  # said once, where they first filled it: not at every step after
            self._report(Finding.PROCESS_LIMIT, "threads")
        self._threads_full = full

    def _introspect(self, event: str, args: tuple) -> None:
        """The notebook's own code asking for frames or objects of its process (or for a course function's code)."""
        if event == "sys._getframe" and args[0].f_code.co_filename == __file__:
            return  # the watch's own look at the stack (which raises this event too)
        attribute = args[1] if event == "object.__getattr__" else None
        if attribute is not None and attribute not in _FRAME_ATTRIBUTES and attribute != "__code__":
            return
        # its frames through `inspect` (stack, currentframe) too; a code object only itself (`inspect.signature`
        # reads one to show a signature)
        if not self._called_by_notebook(through_inspect=attribute != "__code__"):
            return
        if attribute == "__code__":  # a copy of the course's code would not be seen by the calls' profiler
            own = _course_function(args[0], self._package)
            if own is not None and own.__code__ not in self._allowed:
                self._report(Finding.CODE_READ, f"{_qualified(own)}.__code__")
            return
        self._report(Finding.INTROSPECT, f"`{event}()`" if attribute is None else f"a frame (`.{attribute}`)")

    def _called_by_notebook(self, through_inspect: bool) -> bool:
        """Whether the code that raised the event is the notebook's own (itself, or through `inspect` if
        `through_inspect`), not a library's nor the grader's."""
        frame = sys._getframe(1)
        while frame is not None and frame.f_code is not _HOOK:  # the innermost hook: what raised the event is below it
            frame = frame.f_back
        frame = frame.f_back if frame is not None else None
        while through_inspect and frame is not None and (frame.f_code.co_filename == _INSPECT
                                                         or frame.f_code in _HANDING_OUT):
            frame = frame.f_back
        return frame is not None and not frame.f_code.co_filename.startswith(self._libraries)

    def _check_write(self, full: str, verb: str) -> None:
        if (full + os.sep).startswith(self._writable) or full in _DEVICES or full.startswith(_STREAMS):
            return
        self._report(Finding.WRITE, f"{verb} {full}")

    def _check_read(self, full: str, verb: str) -> None:
        if (full + os.sep).startswith(self._writable):  # its own folders, the top one (`/sandbox`) included
            return
        course = (full + os.sep).startswith(self._course) and not full.startswith(self._libraries)
        if course or "solutions" in full.split(os.sep) or full.startswith(self._package):
            if self._by_notebook():
                self._report(Finding.READ, f"{verb} {full}")
        elif full != os.sep and not (full + os.sep).startswith(self._visible) and self._by_notebook(direct=True):
            self._report(Finding.OUTSIDE, f"{verb} {full}")

    def _by_notebook(self, direct: bool = False) -> bool:
        """Whether the notebook's own code is doing what is being audited: not the package, nor an import.

        With `direct`, only the notebook's code itself, or the standard library
        or IPython on its behalf (open, pathlib, shutil): other libraries probe
        files of their own (configuration, caches) that say nothing about it.
        """
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename == __file__:
            frame = frame.f_back
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith("<frozen importlib") or name.startswith(self._package):
                return False
            if not name.startswith(self._libraries):
                return True
            if direct and not name.startswith(self._wrappers):
                return False
            frame = frame.f_back
        return False

    # --- snapshots of the code ------------------------------------------------------------------------

    def snapshot(self) -> None:
        """Remember the course's modules, their functions and classes, numpy's functions and the builtins."""
        self._modules = {n: m for n, m in list(sys.modules.items()) if _watched(n) and isinstance(m, types.ModuleType)}
        self._take_state()

    def changes(self) -> None:
        """Report code replaced since the last look (then take the new code as the reference), and threads that fill
        the sandbox's limit (started in a way that gives them no profile, such as `_thread.start_new_thread`)."""
        self._count_threads()
        imported = [(name, module) for name, module in list(sys.modules.items())
                    if _watched(name) and name not in self._modules and isinstance(module, types.ModuleType)]
        replaced = [name for name, module in self._modules.items() if sys.modules.get(name) is not module]
        if not imported and not replaced and _same(self._identities_now(), self._identities):
            return  # every object the last state was read from is still there: comparing it would find nothing
        planted = []
        for name, module in imported:
            # imported since the snapshot: its own code comes from files; the notebook's, from cells
            self._modules[name] = module
            planted += [f"{name}.{attr}" for attr, value in list(vars(module).items())
                        if isinstance(value, types.FunctionType)
                        and not value.__code__.co_filename.startswith(self._libraries)]
        before = self._state
        now = self._take_state()
        changed = planted + [k for k, v in before.items() if now.get(k) is None or not _same(now[k], v)]
        # A module imported since the last look brings its own names, and its package gains its name (the grading
        # package's checks are imported when a notebook first asks for one): neither is a name planted.
        fresh = {name for name, _ in imported}
        added = [k for k in now if k not in before and now[k][0] == "strict"
                 and not (k in fresh and now[k][1] is sys.modules.get(k))
                 and not any(k.startswith(name + ".") for name in fresh)]
        changed += [f"sys.modules[{name!r}]" for name in replaced]
        numpy = [k for k in changed + added if k.split(".")[0] == "numpy"]
        course = [k for k in changed + added if k not in numpy]
        if course:
            self._report(Finding.TAMPER, _names(course))
        if numpy:
            self._report(Finding.NUMPY, _names(numpy))

    def _take_state(self) -> dict[str, tuple]:
        """`_current()` as the new reference, and the identities of everything it is read from, taken first (so
        that a change made while it is read, by a thread of the notebook, is seen at the next look)."""
        import builtins

        namespaces = [vars(builtins)]
        for name, module in self._modules.items():
            namespaces.append(vars(module))
            if name not in _NUMPY_MODULES:
                namespaces += [vars(value) for value in list(vars(module).values()) if isinstance(value, type)]
        functions = [value for namespace in namespaces for value in list(namespace.values())
                     if isinstance(value, types.FunctionType)]
        self._read_from = (namespaces, functions)
        self._identities = self._identities_now()
        self._state = self._current()
        return self._state

    def _identities_now(self) -> list:
        """Every object `_current()` reads, or whose change would change what it reads, in order: the builtins
        module, each namespace's names, values and whether each is callable, and what each function refers to (its
        code and defaults among them). A list built in C, so that a look after every call costs little."""
        import builtins

        namespaces, functions = self._read_from
        found = [builtins]
        for namespace in namespaces:
            found += namespace.keys()
            found += namespace.values()
            found += map(callable, namespace.values())
        # each function's code, defaults, globals, ... as the collector sees them (reading `__code__` itself would
        # raise an audit event, and call the hook, for each function)
        found += gc.get_referents(*functions)
        return found

    def _current(self) -> dict[str, tuple]:
        state: dict[str, tuple] = {}
        for name, module in self._modules.items():
            strict = name.startswith("attention_course.grading")
            for attr, value in list(vars(module).items()):
                if attr.startswith("__") and attr.endswith("__"):
                    continue
                key = f"{name}.{attr}"
                if strict or _is_code(value):
                    state[key] = ("strict" if strict else "code", *_parts(value))
                if isinstance(value, type) and getattr(value, "__module__", None) == name and name not in _NUMPY_MODULES:
                    for cls_attr, member in list(vars(value).items()):
                        if cls_attr in ("__dict__", "__weakref__", "__doc__") or not (strict or _is_code(member)):
                            continue
                        state[f"{key}.{cls_attr}"] = ("strict" if strict else "code", *_parts(member))
        import builtins

        for attr, value in list(vars(builtins).items()):
            if not attr.startswith("_") and attr not in _IPYTHON_BUILTINS and callable(value):
                state[f"builtins.{attr}"] = ("code", *_parts(value))
        return state

    # --- the calls' profiler --------------------------------------------------------------------------

    @contextmanager
    def calls_watched(self, name: str, fn):
        """Watch one call of the notebook's function `name` (= `fn`); yields a dict set to its outcome."""
        own = _course_function(fn, self._package)
        if own is not None and own.__code__ not in self._allowed:
            self._report(Finding.COURSE_CODE, f"{_qualified(own)} (the function graded as {name} is the course's own)")
        outcome = {"status": None}
        self._setprofile_seen = False
        if getattr(threading, "_profile_hook", self._profile) is not self._profile:
            self._report(Finding.TAMPER, "threading.setprofile (the grader's profiler watches the notebook's threads)")
            threading.setprofile(self._profile)
        self._found = {}
        self._calling = True
        self._set_profile(self._profile)
        try:
            yield outcome
        finally:
            still = sys.getprofile() is self._profile
            self._calling = False
            self._set_profile(None)
            if outcome["status"] == "returned" and (not still or self._setprofile_seen):
                self._report(Finding.TAMPER, "sys.setprofile during a call (the grader's profiler watches the calls)" if still
                             else "the grader's profiler was removed during a call")
            for key in sorted(self._found):
                self._report(Finding.COURSE_CODE, key)

    def _set_profile(self, fn) -> None:
        self._own_setprofile = True
        try:
            sys.setprofile(fn)  # the main thread; the notebook's other threads have `_thread_profile`
        finally:
            self._own_setprofile = False


_HANDLERS = {
    **dict.fromkeys(("os.kill", "os.killpg"), Watch._signal),
    **dict.fromkeys(("socket.connect", "socket.sendto", "socket.sendmsg", "socket.bind", "socket.getaddrinfo",
                     "socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr", "socket.getnameinfo",
                     "urllib.Request", "http.client.connect", "ftplib.connect", "smtplib.connect", "poplib.connect",
                     "imaplib.open", "nntplib.connect", "telnetlib.Telnet.open"), Watch._network),
    **dict.fromkeys(("subprocess.Popen", "os.system", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn",
                     "os.exec", "pty.spawn"), Watch._process),
    "open": Watch._open,
    **dict.fromkeys(("os.remove", "os.rmdir", "os.mkdir", "os.rename", "os.link", "os.symlink", "os.chmod",
                     "os.chown", "os.truncate", "os.utime", "os.setxattr", "os.removexattr", "shutil.rmtree",
                     "shutil.chown", "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree",
                     "shutil.move"), Watch._paths),
    **dict.fromkeys(("os.listdir", "os.scandir", "glob.glob", "os.chdir"), Watch._listing),
    "sys.setprofile": Watch._setprofile,
    COURSE_CALL: Watch._course_call,
    "object.__setattr__": Watch._setattr,
    **dict.fromkeys(("ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.cdata", "ctypes.string_at", "ctypes.wstring_at",
                     "ctypes.PyObj_FromPtr"), Watch._ctypes),
    **dict.fromkeys(("gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._getframe", "sys._current_frames",
                     "sys.settrace", "object.__getattr__"), Watch._introspect),
}
_INSPECT = inspect.__file__
_HOOK = Watch._hook.__code__
_HANDING_OUT = frozenset(getattr(fn, "__code__", None) for fn in (
    traceback.walk_stack, traceback.walk_tb, getattr(traceback, "_walk_tb_with_full_positions", None),
    logging.currentframe)) - {None}
"""The standard library's functions that hand the frames they take to their caller: who asked is whoever called them
(the module's own formatting, which hands out only text, calls them too)."""


def _calls_profile(package: str, libraries: tuple, allowed: frozenset):
    """The calls' profiler: for each function of the course `package` (not of this sandbox, not `allowed`) entered
    from the notebook's own code, the audit event COURSE_CALL with its name.

    `sys.getprofile()` and `threading.getprofile()` hand it to anyone, so it holds nothing to change: no record (the
    audit hook counts the events, while a call runs) and no closure (a cell's contents can be replaced unseen), only
    defaults of immutable values, whose replacement raises an audit event (`object.__setattr__`).
    """

    def profile(frame, event, arg, audit=sys.audit, name=COURSE_CALL, package=package, here=_HERE,
                libraries=libraries, allowed=allowed, qualname=getattr):
        if event != "call":
            return
        code = frame.f_code
        filename = code.co_filename
        if not filename.startswith(package) or filename.startswith(here) or code in allowed:
            return
        if code.co_name == "<module>":
            return  # an import running a module's body
        caller = frame.f_back
        while caller is not None and caller.f_code.co_filename.startswith(libraries):
            if caller.f_code.co_filename.startswith(package):
                return  # the package calling itself, maybe through a library (contextlib, numpy)
            caller = caller.f_back
        if caller is None:
            return
        audit(name, f"{frame.f_globals.get('__name__', '?')}.{qualname(code, 'co_qualname', code.co_name)}")

    return profile


def _allowed_code(package, provided: list[str]) -> frozenset:
    """Code objects the notebook may enter: what the exercise provides, and the worker's own alarm."""
    from ...checks.engine import calls

    allowed = set()
    for name in provided:
        obj = getattr(package, name, None)
        members = vars(obj).values() if isinstance(obj, type) else [obj]
        for member in members:
            code = getattr(member, "__code__", None)
            if isinstance(code, types.CodeType):
                allowed.add(code)
    limit = getattr(calls.time_limit, "__wrapped__", calls.time_limit)
    allowed.update(c for c in limit.__code__.co_consts if isinstance(c, types.CodeType))  # the alarm's handler
    return frozenset(allowed)  # the calls' profiler holds it, where the notebook could find it: it cannot grow


def _descends(pid: int, ancestor: int, depth: int = 8) -> bool:
    """Whether process `pid` was started by `ancestor` (its child, grandchild, ...)."""
    for _ in range(depth):
        try:
            with open(f"/proc/{int(pid)}/stat", "rb") as f:
                pid = int(f.read().rpartition(b")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
    return False


def _ipython_folder() -> str:
    import IPython

    return os.path.dirname(os.path.abspath(IPython.__file__))


def _course_function(fn, package: str):
    """The course's function behind `fn` (itself, a bound method or a partial of it), or None."""
    for _ in range(4):
        fn = getattr(fn, "__func__", None) or getattr(fn, "func", None) or fn
        if isinstance(fn, types.FunctionType):
            return fn if fn.__code__.co_filename.startswith(package) else None
    return None


def _qualified(fn) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def _watched(name: str) -> bool:
    return name == "attention_course" or name.startswith("attention_course.") or name in _NUMPY_MODULES


def _is_code(value) -> bool:
    return callable(value) or isinstance(value, types.ModuleType)


def _parts(value) -> tuple:
    """What identifies a piece of code: the object and, for a function, its code and defaults."""
    if isinstance(value, types.FunctionType):
        return (value, value.__code__, value.__defaults__, value.__kwdefaults__)
    return (value,)


def _same(a, b) -> bool:
    """The same objects, one by one (never `==`, which a planted object could answer as it likes)."""
    return len(a) == len(b) and all(map(operator.is_, a, b))  # in C: after every call, for every function watched


def _names(keys: list[str], shown: int = 5) -> str:
    keys = sorted(set(keys))
    more = f" and {len(keys) - shown} more" if len(keys) > shown else ""
    return ", ".join(keys[:shown]) + more


def _folder(path: str) -> str:
    return os.path.normpath(os.path.abspath(path)) + os.sep


def _absolute(path) -> str:
    try:
        text = os.fsdecode(os.fspath(path))
    except TypeError:
        return str(path)
    return os.path.normpath(os.path.join(os.getcwd(), text))


def _text(value) -> str:
    return os.fsdecode(value) if isinstance(value, (bytes, str)) else str(value)


def _command(argv) -> str:
    if isinstance(argv, (str, bytes)):
        return _text(argv)
    try:
        return shlex.join(_text(a) for a in argv)
    except TypeError:
        return str(argv)


def _address(address) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return _text(address)[:150]


def _unraisable(unraisable) -> None:
    """`sys.unraisablehook`: one line, the exception's type and message, with no source line of anyone's."""
    exc = unraisable.exc_value
    try:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    except Exception:  # noqa: BLE001 -- a hostile __str__
        text = type(exc).__name__
    try:
        sys.stderr.write(f"Exception ignored: {text[:300]}\n")
    except Exception:  # noqa: BLE001 -- stderr closed or replaced by the notebook
        pass


def _signal_name(number) -> str:
    try:
        return signal.Signals(number).name
    except (ValueError, TypeError):
        return f"signal {number}"
