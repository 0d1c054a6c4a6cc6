# ruff: noqa: UP010, UP031 -- old syntax on purpose, see the docstring's last paragraph
"""Runs the pi-lsp server this extension carries, with whichever Python runs this file.

The extension starts ``python -I launch.py [pi-lsp arguments]``. ``libs/common`` holds pi-lsp and
its pure-Python and ``abi3`` dependencies, ``libs/cp3XY`` the compiled ones for each CPython ABI;
both go first on ``sys.path`` of this process only, so nothing leaks into the commands the agent
runs. ``launch.py --probe`` prints, as one JSON object, whether this interpreter can run the
bundled server and why not: the extension asks every candidate interpreter before choosing one.

Only the standard library is used here, and nothing of venv, ensurepip or pip: a bare system
Python (Debian's ``python3`` without ``python3-venv``) is enough. The syntax stays old on purpose:
an old ``python`` on PATH must be told it is too old, not fail with a SyntaxError.
"""

from __future__ import print_function

import json
import os
import platform
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = os.path.join(HERE, "libs")
MINIMUM = (3, 11)


def manifest():
    """What the bundle was built for (``tools/bundle_server.py`` writes it), or None without one."""
    try:
        with open(os.path.join(LIBS, "manifest.json"), encoding="utf-8") as file:
            return json.load(file)
    except (OSError, ValueError):
        return None


def abi_tag():
    """``cp312``, or ``cp313t`` for a free-threaded build (whose extensions differ)."""
    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    return "cp%d%d%s" % (sys.version_info[0], sys.version_info[1], "t" if free_threaded else "")


def problem_with_this_python(bundle):
    """Why this interpreter cannot run the bundled server, or None when it can."""
    version = ".".join(map(str, sys.version_info[:3]))
    implementation = getattr(sys, "implementation", None)
    if implementation is None or implementation.name != "cpython":
        return "Python %s is not CPython" % version
    if sys.version_info[:2] < MINIMUM:
        return "Python %s is older than 3.11" % version
    if bundle is None:
        return "this build of the extension carries no server (no libs/manifest.json)"
    if abi_tag() not in bundle["abis"]:
        return "Python %s (%s) has no bundled libraries; bundled: %s" % (
            version,
            abi_tag(),
            ", ".join(bundle["abis"]),
        )
    machine = platform.machine().lower()
    if sys.platform != bundle["os"] or machine not in bundle["machines"]:
        return "this Python is built for %s/%s, the bundle for %s/%s" % (
            sys.platform,
            machine,
            bundle["os"],
            bundle["machines"][0],
        )
    return None


def probe():
    bundle = manifest()
    problem = problem_with_this_python(bundle)
    return {
        "executable": sys.executable,
        "version": ".".join(map(str, sys.version_info[:3])),
        "abi": abi_tag(),
        "bundled": problem is None,
        "bundledVersion": bundle and bundle.get("piLsp"),
        "problem": problem,
        # Without a usable bundle, a pi-lsp installed into this interpreter still serves.
        "installed": sys.version_info[:2] >= MINIMUM and _finds("pi_lsp"),
    }


def _finds(module):
    import importlib.util

    return importlib.util.find_spec(module) is not None


def main():
    if sys.argv[1:] == ["--probe"]:
        print(json.dumps(probe()))
        return 0
    bundle = manifest()
    problem = problem_with_this_python(bundle)
    if problem:
        print("pi-lsp: " + problem, file=sys.stderr)
        return 2
    sys.path[0:0] = [os.path.join(LIBS, abi_tag()), os.path.join(LIBS, "common")]
    from pi_lsp.cli import main as pi_lsp_main

    sys.argv[0] = "pi-lsp"
    return pi_lsp_main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
