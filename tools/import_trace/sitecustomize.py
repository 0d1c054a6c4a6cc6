"""Records what every Python process of a test run loads, for the bundle's pruning rules.

Put this folder on ``PYTHONPATH`` and name an output folder in ``PI_IMPORT_TRACE``: each process
(pytest, every server a test spawns, the scripted model) then appends to ``<pid>.trace`` one line
per module it has loaded (``m name``, from ``sys.modules``, looked at every half second and at
exit) and per file it opens through ``open`` (``f path``), so a process that is killed still leaves
its record. ``tools/import_trace.py`` runs the suite this way and sums the records up. Nothing is
recorded when ``PI_IMPORT_TRACE`` is unset.

``sys.modules`` rather than an import hook: a module that was only looked for (``find_spec`` to
test whether an optional package is there) is not loaded. Python-level audit hooks are avoided:
CPython 3.11 fails pytest's assertion rewriting with "AST constructor recursion depth mismatch"
when one is installed.
"""

import atexit
import builtins
import contextlib
import io
import os
import sys
import threading


def _install(folder: str) -> None:
    seen: set[str] = set()
    lock = threading.Lock()
    state = {"pid": None, "fd": None}

    def write(lines: list[str]) -> None:
        fresh = [line for line in lines if line not in seen]
        if not fresh:
            return
        with lock:
            seen.update(fresh)
            pid = os.getpid()
            if state["pid"] != pid:  # a forked child writes a record of its own
                state["pid"] = pid
                state["fd"] = os.open(
                    os.path.join(folder, f"{pid}.trace"),
                    os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                    0o644,
                )
            os.write(
                state["fd"],
                "".join(line + "\n" for line in fresh).encode("utf-8", "surrogateescape"),
            )

    def modules() -> None:
        # Tracing must never change what the traced process does.
        with contextlib.suppress(Exception):
            write([f"m {name}" for name in list(sys.modules)])

    def poll() -> None:
        event = threading.Event()
        while not event.wait(0.5):
            modules()

    original_open = builtins.open

    def traced_open(file, *arguments, **keywords):
        if isinstance(file, (str, os.PathLike)):
            with contextlib.suppress(Exception):
                write([f"f {os.path.abspath(os.fspath(file))}"])
        return original_open(file, *arguments, **keywords)

    builtins.open = traced_open
    io.open = traced_open
    atexit.register(modules)
    threading.Thread(target=poll, name="pi-import-trace", daemon=True).start()


if os.environ.get("PI_IMPORT_TRACE"):
    _install(os.environ["PI_IMPORT_TRACE"])
