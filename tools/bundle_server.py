"""Builds the pi-lsp server the VS Code extension carries: ``editors/vscode/bundled/libs``.

For one VS Code target (``linux-x64`` by default) and CPython 3.11, 3.12 and 3.13:

- builds pi-lsp's wheel from this checkout and resolves its dependencies, offline, from the
  wheelhouse (``tools/wheelhouse.py``, which downloads them once with pip's ``--platform``,
  ``--python-version`` and ``--only-binary``);
- installs with ``pip install --target`` every wheel that all three ABIs share (pure Python and
  ``abi3``) into ``libs/common`` and the rest, the compiled packages, into ``libs/cp311`` …
  ``cp313``;
- leaves out what ``tools/bundle/prune.txt`` names (parts of litellm and botocore pi-lsp never
  loads, measured by ``tools/import_trace.py``), strips the extensions' debug symbols, checks that
  every module and data file the trace saw is still there and that each compiled extension fits
  its ABI folder, and writes ``libs/manifest.json``, which ``bundled/launch.py`` reads.

    python tools/bundle_server.py [--target linux-x64] [--output editors/vscode/bundled/libs]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import wheelhouse

ROOT = wheelhouse.ROOT
DEFAULT_OUTPUT = ROOT / "editors" / "vscode" / "bundled" / "libs"
PRUNE_RULES = Path(__file__).resolve().parent / "bundle" / "prune.txt"
TRACED = Path(__file__).resolve().parent / "bundle" / "traced.txt"
# What launch.py compares with the interpreter's sys.platform and platform.machine().
RUNTIME_PLATFORMS = {
    "linux-x64": ("linux", ["x86_64", "amd64"]),
    "linux-arm64": ("linux", ["aarch64", "arm64"]),
    "darwin-arm64": ("darwin", ["arm64"]),
    "darwin-x64": ("darwin", ["x86_64"]),
    "win32-x64": ("win32", ["amd64", "x86_64"]),
}


def build_pi_lsp_wheel(find_links: Path) -> Path:
    """pi-lsp's wheel, built from this checkout (setuptools comes from the wheelhouse)."""
    destination = wheelhouse.DEFAULT_DESTINATION / "dist"
    shutil.rmtree(destination, ignore_errors=True)
    wheelhouse.pip(
        "wheel", "--no-deps", "--no-index", "--find-links", str(find_links),
        "--wheel-dir", str(destination), str(ROOT),
    )  # fmt: skip
    (wheel,) = destination.glob("pi_lsp-*.whl")
    return wheel


def split_by_abi(closures: dict[str, list[Path]]) -> tuple[list[Path], dict[str, list[Path]]]:
    """The wheels every ABI installs alike (by file name), and each ABI's own."""
    names = [{wheel.name for wheel in wheels} for wheels in closures.values()]
    shared = set.intersection(*names)
    first = next(iter(closures.values()))
    common = [wheel for wheel in first if wheel.name in shared]
    own = {abi: [w for w in wheels if w.name not in shared] for abi, wheels in closures.items()}
    return common, own


def install(wheels: list[Path], target_directory: Path, target: str, abi: str) -> None:
    if not wheels:
        target_directory.mkdir(parents=True, exist_ok=True)
        return
    wheelhouse.pip(
        "install", "--no-deps", "--no-index", "--no-compile", "--target", str(target_directory),
        *wheelhouse.target_options(target, abi), *map(str, wheels),
    )  # fmt: skip
    shutil.rmtree(target_directory / "bin", ignore_errors=True)  # console scripts of the build host


def prune_rules(path: Path = PRUNE_RULES) -> list[str]:
    """The patterns of ``prune.txt`` (one a line; ``#`` starts a comment)."""
    rules = []
    for line in path.read_text().splitlines():
        rule = line.split("#", 1)[0].strip()
        if rule:
            rules.append(rule)
    return rules


def _pattern(glob: str) -> re.Pattern:
    """A .gitignore-style glob as a regular expression over a relative POSIX path."""
    anchored = "/" in glob
    parts = re.split(r"(\*\*|\*|\?)", glob.removeprefix("/"))
    wildcards = {"**": ".*", "*": "[^/]*", "?": "[^/]"}
    body = "".join(wildcards.get(part, re.escape(part)) for part in parts)
    return re.compile(body if anchored else f"(?:.*/)?{body}")


def dropped_by(rules: list[str]):
    """A function telling, for a relative path, the rule that drops it (None: it stays)."""
    compiled = [(rule, rule.startswith("!"), _pattern(rule.removeprefix("!"))) for rule in rules]

    def verdict(relative: str) -> str | None:
        last = None
        for rule, keep, pattern in compiled:
            if pattern.fullmatch(relative):
                last = None if keep else rule
        return last

    return verdict


# A client asked for by name: boto3.client("s3"), session.client(service_name="sts"),
# botocore's self._client_creator('sso'), create_nested_client(session, "sso-oidc"), ….
_CLIENT_CALL = re.compile(
    r"""(?:client|_client_creator|create_nested_client|_get_boto3_client)\(\s*(?:\#[^\n]*\s*)?"""
    r"""(?:[\w.]+\s*,\s*)?(?:service_name\s*=\s*)?["']([a-z0-9-]+)["']"""
    r"""|service_name\s*=\s*["']([a-z0-9-]+)["']"""
)
# botocore's credential and token providers (assume-role, SSO, `aws login`).
CREDENTIAL_SERVICES = {"sts", "sso", "sso-oidc", "signin"}


def aws_services_in_use(common: Path) -> set[str]:
    """The botocore services that code in the bundle creates clients for."""
    data = common / "botocore" / "data"
    if not data.is_dir():
        return set()
    known = {path.name for path in data.iterdir() if path.is_dir()}
    used = set(CREDENTIAL_SERVICES)
    for package in ("litellm", "boto3", "botocore", "s3transfer"):
        for source in (common / package).rglob("*.py"):
            for match in _CLIENT_CALL.finditer(source.read_text(errors="replace")):
                used.add(match[1] or match[2])
    return used & known


def prune(libs: Path, rules: list[str]) -> dict[str, int]:
    """Removes what the rules drop under each libs folder; returns the bytes removed per rule."""
    verdict = dropped_by(rules)
    removed = dict.fromkeys((rule for rule in rules if not rule.startswith("!")), 0)
    for folder in sorted(path for path in libs.iterdir() if path.is_dir()):
        for directory, subdirectories, files in os.walk(folder):
            base = Path(directory)
            for name in list(subdirectories):
                rule = verdict((base / name).relative_to(folder).as_posix())
                if rule:
                    removed[rule] += _size(base / name)
                    shutil.rmtree(base / name)
                    subdirectories.remove(name)
            for name in files:
                rule = verdict((base / name).relative_to(folder).as_posix())
                if rule:
                    removed[rule] += (base / name).stat().st_size
                    (base / name).unlink()
    return removed


def strip_extensions(libs: Path, target: str) -> int:
    """Strips the target's ELF extension modules as Debian strips shared libraries; returns the
    bytes saved.

    ``strip --strip-unneeded`` removes debug information and the static symbol table, which only
    debuggers and backtraces read; the dynamic symbols the interpreter links against stay. Done for
    Linux targets, with binutils' ``strip`` when the build machine has it.
    """
    strip = shutil.which("strip")
    if not target.startswith("linux") or strip is None:
        return 0
    saved = 0
    for library in sorted(libs.rglob("*.so")):
        before = library.stat().st_size
        if (
            subprocess.run(
                [strip, "--strip-unneeded", str(library)], capture_output=True, check=False
            ).returncode
            == 0
        ):
            saved += before - library.stat().st_size
    return saved


# The first bytes of an extension module built for each target's binary format.
_BINARY_MAGIC = {
    "linux": (b"\x7fELF\x02\x01",),  # 64-bit little-endian ELF
    "darwin": (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe"),  # 64-bit Mach-O, universal
    "win32": (b"MZ",),
}
_EXTENSION = re.compile(r"\.(?:(cpython-(\d+)[^.]*)|(cp(\d+)-[^.]+)|(abi3))?\.(so|pyd)$")


def check_abis(libs: Path, target: str, abis: tuple[str, ...]) -> list[str]:
    """Problems with the compiled extensions: each ABI folder must hold the same packages, every
    extension there must be tagged for that ABI (or abi3) and built for the target's binary format,
    and ``common`` may hold only abi3 ones. Returns the problems found (none: the bundle is sound).

    This is how the ABIs the build machine cannot run (here 3.12 and 3.13) are checked.
    """
    problems = []
    magic = _BINARY_MAGIC[RUNTIME_PLATFORMS[target][0]]
    packages = {abi: sorted(p.name for p in (libs / abi).iterdir() if p.is_dir()) for abi in abis}
    for abi in abis[1:]:
        if packages[abi] != packages[abis[0]]:
            problems.append(f"{abi} holds {packages[abi]}, {abis[0]} {packages[abis[0]]}")
    for folder in ("common", *abis):
        for extension in sorted((libs / folder).rglob("*.*")):
            if extension.suffix not in (".so", ".pyd"):
                continue
            name = extension.relative_to(libs).as_posix()
            match = _EXTENSION.search(extension.name)
            version = match and (match[2] or match[4])
            if folder == "common" and version:
                problems.append(f"{name}: built for one ABI, not abi3")
            if folder != "common" and version and f"cp{version}" != folder:
                problems.append(f"{name}: built for cp{version}, not {folder}")
            with extension.open("rb") as file:
                if not file.read(8).startswith(magic):
                    problems.append(f"{name}: not a {target} binary")
    return problems


def present(folders: list[Path], entry: str) -> bool:
    """Whether a ``traced.txt`` entry (``m module`` or ``f path``) is in one of the libs folders."""
    kind, _, name = entry.partition(" ")
    if kind == "f":
        return any((folder / name).exists() for folder in folders)
    relative = name.replace(".", "/")
    for folder in folders:
        base = folder / relative
        if base.with_suffix(".py").exists() or base.is_dir():
            return True
        if base.parent.is_dir() and any(
            found.suffix in (".so", ".pyd") for found in base.parent.glob(f"{base.name}.*")
        ):
            return True
    return False


def traced_entries() -> list[str]:
    if not TRACED.exists():
        raise BundleError(f"{TRACED} is missing: run tools/import_trace.py")
    return [line for line in TRACED.read_text().splitlines() if line and not line.startswith("#")]


class BundleError(RuntimeError):
    """The bundle cannot be built as asked; the message says why."""


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file())


def install_closures(target: str, output: Path, abis: tuple[str, ...]) -> tuple[Path, list[Path]]:
    """pi-lsp's wheel and its dependencies installed under ``output``; returns the wheel and the
    wheels of the first ABI's closure."""
    wheelhouse_folders = wheelhouse.ensure(target, abis)
    wheel = build_pi_lsp_wheel(wheelhouse_folders[abis[0]])
    closures = {
        abi: wheelhouse.resolve(wheelhouse_folders[abi], target, abi, [str(wheel)]) for abi in abis
    }
    common, own = split_by_abi(closures)
    shutil.rmtree(output, ignore_errors=True)
    output.mkdir(parents=True)
    install(common, output / "common", target, abis[0])
    for abi in abis:
        install(own[abi], output / abi, target, abi)
    return wheel, closures[abis[0]]


def prune_checked(
    output: Path, target: str, abis: tuple[str, ...]
) -> tuple[dict[str, int], set[str]]:
    """Prunes, strips and checks the installed libraries; returns the bytes removed per rule and
    the AWS services kept."""
    libs_folders = sorted(path for path in output.iterdir() if path.is_dir())
    traced = [entry for entry in traced_entries() if present(libs_folders, entry)]
    services = aws_services_in_use(output / "common")
    removed = prune(output, prune_rules() + [f"!botocore/data/{name}" for name in sorted(services)])
    lost = [entry for entry in traced if not present(libs_folders, entry)]
    if lost:
        raise BundleError(f"pruning dropped what the test suite loads: {', '.join(lost[:20])}")
    removed["strip --strip-unneeded"] = strip_extensions(output, target)
    problems = check_abis(output, target, abis)
    if problems:
        raise BundleError(
            "the compiled extensions do not fit their ABIs: " + "; ".join(problems[:20])
        )
    return removed, services


def build(target: str, output: Path, abis: tuple[str, ...] = wheelhouse.ABIS) -> dict:
    wheel, closure = install_closures(target, output, abis)
    removed, services = prune_checked(output, target, abis)
    operating_system, machines = RUNTIME_PLATFORMS[target]
    manifest = {
        "piLsp": wheel.name.split("-")[1],
        "target": target,
        "abis": list(abis),
        "os": operating_system,
        "machines": machines,
        "packages": sorted(path.name.split("-")[0].lower() for path in closure),
        "awsServices": sorted(services),
    }
    (output / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return {"manifest": manifest, "removed": removed, "size": _size(output)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--target", default=wheelhouse.host_target(), choices=sorted(RUNTIME_PLATFORMS)
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    arguments = parser.parse_args(argv)
    try:
        result = build(arguments.target, arguments.output)
    except (wheelhouse.WheelhouseError, BundleError, subprocess.CalledProcessError) as error:
        print(f"bundle_server: {error}", file=sys.stderr)
        return 1
    manifest = result["manifest"]
    print(
        f"bundle_server: pi-lsp {manifest['piLsp']} for {manifest['target']} "
        f"({', '.join(manifest['abis'])}): {len(manifest['packages'])} packages, "
        f"{result['size'] / 1e6:.1f} MB in {arguments.output}, "
        f"{sum(result['removed'].values()) / 1e6:.1f} MB left out"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
