"""The wheels pi-lsp runs on, downloaded once per target platform and CPython ABI, and reused.

``build/wheelhouse/<target>/<abi>/`` holds every wheel pi-lsp needs at run time on ``<target>``
(``linux-x64``, ``darwin-arm64``, …) for the CPython ABI ``<abi>`` (``cp311``, …), plus setuptools
to build pi-lsp itself. Three steps of one CI run read it instead of the package registry: the
VS Code bundle (``tools/bundle_server.py``), the wheel smoke test in a fresh virtualenv, and the
Neovim ``:PiInstall`` test.

The first ABI is resolved against the registry with pip's ``--platform``/``--python-version``/
``--only-binary``; the others reuse its pure-Python and ``abi3`` wheels and download only their
own builds of the compiled packages at the same versions, then are checked by resolving them
again without the registry (a full resolve runs when that check fails). A ``.stamp`` per folder
records what it was resolved for, so a second run with the same dependencies does nothing.

    python tools/wheelhouse.py [--target linux-x64] [--abi cp311 --abi cp312 …]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import tomllib
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DESTINATION = ROOT / "build" / "wheelhouse"
ABIS = ("cp311", "cp312", "cp313")
BUILD_REQUIREMENTS = ("setuptools>=77",)

# pip expands macOS versions and the legacy manylinux aliases by itself, but not manylinux_2_x:
# every glibc level a wheel may be built for is listed, down from the 2.28 VS Code requires.
_MANYLINUX_GLIBC = ("2_28", "2_27", "2_26", "2_25", "2_24", "2_17", "2_12", "2_5")
PLATFORMS = {
    "linux-x64": [f"manylinux_{glibc}_x86_64" for glibc in _MANYLINUX_GLIBC]
    + ["manylinux2014_x86_64"],
    "linux-arm64": [f"manylinux_{glibc}_aarch64" for glibc in _MANYLINUX_GLIBC[:6]]
    + ["manylinux2014_aarch64"],
    "darwin-arm64": ["macosx_11_0_arm64"],
    "darwin-x64": ["macosx_10_15_x86_64"],
    "win32-x64": ["win_amd64"],
}
_WHEEL_NAME = re.compile(
    r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-(?P<python>[^-]+)-(?P<abi>[^-]+)-(?P<platform>[^-]+)\.whl$"
)


class WheelhouseError(RuntimeError):
    """A download or resolve failed; the message says which and carries pip's last words."""


def host_target() -> str:
    """The VS Code target name of this machine (``linux-x64`` on a 64-bit Intel Linux)."""
    platform = sysconfig.get_platform()
    names = {
        "linux-x86_64": "linux-x64",
        "linux-aarch64": "linux-arm64",
        "win-amd64": "win32-x64",
    }
    if platform.startswith("macosx"):
        return "darwin-arm64" if platform.endswith("arm64") else "darwin-x64"
    return names.get(platform, platform)


def host_abi() -> str:
    return f"cp{sys.version_info[0]}{sys.version_info[1]}"


def runtime_requirements() -> list[str]:
    """pi-lsp's dependencies, as pyproject.toml declares them (the one list there is)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return list(project["dependencies"])


def target_options(target: str, abi: str) -> list[str]:
    """pip's options to choose the wheels of ``target`` for the CPython ABI ``abi``."""
    if target not in PLATFORMS:
        raise WheelhouseError(f"unknown target {target!r}; known: {', '.join(PLATFORMS)}")
    version = f"{abi[2]}.{abi[3:]}"
    options = ["--only-binary=:all:", "--implementation", "cp", "--python-version", version]
    options += ["--abi", abi]
    for platform in PLATFORMS[target]:
        options += ["--platform", platform]
    return options


def folder(destination: Path, target: str, abi: str) -> Path:
    return destination / target / abi


def _stamp(target: str, abi: str, requirements: list[str]) -> str:
    key = json.dumps([target, abi, PLATFORMS[target], sorted(requirements)])
    return hashlib.sha256(key.encode()).hexdigest()


def pip(*arguments: str) -> None:
    command = [sys.executable, "-m", "pip", *arguments, "--quiet", "--progress-bar", "off"]
    result = subprocess.run(command, capture_output=True, check=False, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise WheelhouseError(f"pip {arguments[0]} failed ({' '.join(command[3:8])} …):\n{tail}")


def _download(directory: Path, target: str, abi: str, requirements: list[str], *extra: str) -> None:
    pip("download", "--dest", str(directory), *target_options(target, abi), *extra, *requirements)


def _abi_specific(wheel: Path, abi: str) -> re.Match | None:
    match = _WHEEL_NAME.match(wheel.name)
    return match if match and abi in match["abi"].split(".") else None


def _share(source: Path, directory: Path, abi: str) -> list[str]:
    """Links the ABI-independent wheels of ``source`` into ``directory``; returns the pins of the
    others."""
    pins = []
    for wheel in sorted(source.glob("*.whl")):
        specific = _abi_specific(wheel, source.name)
        if specific:
            pins.append(f"{specific['name']}=={specific['version']}")
        elif not (directory / wheel.name).exists():
            try:
                os.link(wheel, directory / wheel.name)
            except OSError:
                shutil.copy2(wheel, directory / wheel.name)
    return pins


def ensure(
    target: str, abis: tuple[str, ...] | list[str], destination: Path = DEFAULT_DESTINATION
) -> dict[str, Path]:
    """Fills ``destination/<target>/<abi>`` for each ABI (unless already done); returns the folders.

    Only the first ABI is resolved here; the others are checked when ``resolve`` reads them.
    """
    requirements = _requirements()
    folders = {}
    resolved: Path | None = None
    for abi in abis:
        directory = folder(destination, target, abi)
        folders[abi] = directory
        if _is_current(directory, target, abi):
            resolved = resolved or directory
            continue
        shutil.rmtree(directory, ignore_errors=True)  # wheels of an older resolve would linger
        directory.mkdir(parents=True)
        if resolved is None:
            _download(directory, target, abi, requirements)
        else:
            pins = _share(resolved, directory, abi)
            if pins:
                _download(directory, target, abi, pins, "--no-deps")
        (directory / ".stamp").write_text(_stamp(target, abi, requirements))
        resolved = resolved or directory
        print(f"wheelhouse: {target}/{abi}: {len(list(directory.glob('*.whl')))} wheels")
    return folders


def resolve(directory: Path, target: str, abi: str, requirements: list[str]) -> list[Path]:
    """The wheels of ``directory`` that ``requirements`` need on ``target``/``abi``, resolved
    offline.

    When the folder lacks a wheel (the ABI's dependencies differ from the first one's), it is
    resolved again against the registry and the offline resolve repeated.
    """
    try:
        return _resolve_offline(directory, target, abi, requirements)
    except WheelhouseError:
        _download(directory, target, abi, _requirements())
        return _resolve_offline(directory, target, abi, requirements)


def _resolve_offline(directory: Path, target: str, abi: str, requirements: list[str]) -> list[Path]:
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        pip(
            "install", "--dry-run", "--ignore-installed", "--report", str(report),
            "--target", str(Path(scratch) / "target"), "--no-index", "--find-links", str(directory),
            *target_options(target, abi), *requirements,
        )  # fmt: skip
        installs = json.loads(report.read_text())["install"]
    return [
        Path(urllib.request.url2pathname(urllib.parse.urlparse(item["download_info"]["url"]).path))
        for item in installs
    ]


def _requirements() -> list[str]:
    return runtime_requirements() + list(BUILD_REQUIREMENTS)


def _is_current(directory: Path, target: str, abi: str) -> bool:
    stamp = directory / ".stamp"
    return stamp.exists() and stamp.read_text() == _stamp(target, abi, _requirements())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default=host_target(), choices=sorted(PLATFORMS))
    parser.add_argument("--abi", action="append", choices=ABIS, help="default: cp311, cp312, cp313")
    parser.add_argument("--destination", type=Path, default=DEFAULT_DESTINATION)
    arguments = parser.parse_args(argv)
    try:
        ensure(arguments.target, arguments.abi or ABIS, arguments.destination)
    except WheelhouseError as error:
        print(f"wheelhouse: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
