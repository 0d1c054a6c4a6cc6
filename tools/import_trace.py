"""What pi-lsp loads, measured over the whole test suite, for the VS Code bundle's pruning rules.

    python tools/import_trace.py run [DIR] [-- pytest arguments]  # the suite, every process traced
    python tools/import_trace.py report DIR [--write]  # sum up; --write updates the list

``run`` puts ``tools/import_trace/`` (a ``sitecustomize``) on ``PYTHONPATH`` with
``PI_IMPORT_TRACE=DIR``, so pytest and every server, scripted model and demo a test starts
records each module it imports and each file it opens (run it alone: it is the whole suite).
``report`` keeps what belongs to pi-lsp's run-time dependencies (the distributions ``pi-lsp``
requires, followed through their own requirements, as installed in this virtualenv), prints per
top-level package how much of it was loaded, and with ``--write`` stores the modules and data
files in ``tools/bundle/traced.txt``. ``tools/bundle_server.py`` checks that pruning keeps every
one of them.
"""

from __future__ import annotations

import argparse
import collections
import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
TRACED = ROOT / "tools" / "bundle" / "traced.txt"
SITE_PACKAGES = re.compile(r".*/(?:site|dist)-packages/(.+)$")
BYTECODE = re.compile(r"(.*/)?__pycache__/([^/.]+)\.[^/]+\.pyc$")


def run(directory: Path, pytest_arguments: list[str]) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT / "tools" / "import_trace"), environment.get("PYTHONPATH")])
    )
    environment["PI_IMPORT_TRACE"] = str(directory)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_arguments]
    return subprocess.run(command, cwd=ROOT, env=environment, check=False).returncode


def runtime_distributions(root: str = "pi-lsp") -> dict[str, importlib.metadata.Distribution]:
    """``root`` and everything it requires at run time (no extras), by normalized name."""
    found: dict[str, importlib.metadata.Distribution] = {}
    pending = [root]
    while pending:
        name = re.sub(r"[-_.]+", "-", pending.pop()).lower()
        if name in found:
            continue
        try:
            distribution = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        found[name] = distribution
        for text in distribution.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(requirement.name)
    return found


def top_level_names(distributions) -> set[str]:
    """The top-level modules and folders (dist-info included) the distributions install."""
    names = set()
    for distribution in distributions.values():
        for file in distribution.files or []:
            first = file.parts[0]
            if first not in ("..", "__pycache__") and not first.endswith(".pth"):
                names.add(
                    first.removesuffix(".py").split(".")[0]
                    if first.endswith((".py", ".so"))
                    else first
                )
    return names


def read_traces(directory: Path) -> tuple[set[str], set[str]]:
    modules, files = set(), set()
    for trace in directory.glob("*.trace"):
        for line in trace.read_text(errors="replace").splitlines():
            kind, _, value = line.partition(" ")
            if kind == "m":
                modules.add(value)
            elif kind == "f" and (match := SITE_PACKAGES.match(value)):
                relative = match[1]
                bytecode = BYTECODE.match(relative)
                files.add(f"{bytecode[1] or ''}{bytecode[2]}.py" if bytecode else relative)
    return modules, files


def traced_entries(directory: Path) -> list[str]:
    names = top_level_names(runtime_distributions())
    modules, files = read_traces(directory)
    entries = {f"m {module}" for module in modules if module.split(".")[0] in names}
    # Sources are covered by their modules; what is left are data files (JSON, tokenizers). The
    # metadata every importlib.metadata scan reads (all distributions' dist-info) is left out: a
    # distribution the bundle leaves out entirely must not be listed, and its modules are.
    entries |= {
        f"f {file}"
        for file in files
        if file.split("/")[0] in names
        and not file.endswith((".py", ".so"))
        and ".dist-info/" not in file
    }
    return sorted(entries)


def report(directory: Path, write: bool) -> None:
    distributions = runtime_distributions()
    modules, files = read_traces(directory)
    loaded = collections.Counter()
    installed = collections.Counter()
    for distribution in distributions.values():
        for file in distribution.files or []:
            path = Path(distribution.locate_file(file))
            if not path.is_file():
                continue
            relative = file.as_posix()
            top = relative.split("/")[0]
            key = "/".join(relative.split("/")[:2]) if top in ("litellm", "botocore") else top
            installed[key] += path.stat().st_size
            module = relative.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            if (
                relative in files
                or (relative.endswith(".py") and module in modules)
                or (
                    relative.endswith((".so", ".pyd"))
                    and relative.split(".")[0].replace("/", ".") in modules
                )
            ):
                loaded[key] += path.stat().st_size
    print(f"{len(list(directory.glob('*.trace')))} processes traced, {len(modules)} modules")
    print(f"{'installed MB':>12} {'loaded MB':>10}  package (litellm and botocore by folder)")
    for key, size in installed.most_common(40):
        print(f"{size / 1e6:12.2f} {loaded[key] / 1e6:10.2f}  {key}")
    total, used = sum(installed.values()), sum(loaded.values())
    print(f"{total / 1e6:12.2f} {used / 1e6:10.2f}  all {len(distributions)} distributions")
    if write:
        entries = traced_entries(directory)
        header = (
            "# Every module and data file of pi-lsp's run-time dependencies that a process of the\n"
            "# test suite loaded (tools/import_trace.py): pruning the VS Code bundle keeps them"
            " all.\n"
        )
        TRACED.write_text(header + "\n".join(entries) + "\n")
        print(f"wrote {len(entries)} entries to {TRACED.relative_to(ROOT)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run the test suite with every process traced")
    run_parser.add_argument(
        "directory", nargs="?", type=Path, default=ROOT / "build" / "import-trace"
    )
    run_parser.add_argument("pytest_arguments", nargs=argparse.REMAINDER)
    report_parser = commands.add_parser("report", help="sum a traced run up")
    report_parser.add_argument("directory", type=Path)
    report_parser.add_argument("--write", action="store_true", help=f"update {TRACED.name}")
    arguments = parser.parse_args(argv)
    if arguments.command == "run":
        return run(arguments.directory, [a for a in arguments.pytest_arguments if a != "--"])
    report(arguments.directory, arguments.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
