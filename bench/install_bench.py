"""Install benchmark: what a fresh ``pip install pi-lsp`` costs, and what the VS Code bundle weighs.

Prints figures, asserts nothing:

(a) a fresh virtualenv with the wheel of this checkout installed (not editable): the time of the
    ``pip install``, the size of the virtualenv and of its site-packages, and the number of
    packages (pip's own, which every virtualenv has, not counted); from the wheelhouse by default
    (``tools/wheelhouse.py``, no network), or from the package registry with ``--registry``;
(b) the biggest installed distributions;
(c) with ``--bundle``: the VS Code bundle (``editors/vscode/bundled/libs``) per folder.

    python bench/install_bench.py [--registry] [--bundle]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.wheelhouse import offline_pip_environment, wheelhouse_for


def megabytes(path: Path) -> float:
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file()) / 1e6


def build_wheel(folder: Path, find_links: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--wheel-dir",
            str(folder),
            str(ROOT),
        ],
        check=True,
        env=offline_pip_environment(find_links),
    )
    (wheel,) = folder.glob("pi_lsp-*.whl")
    return wheel


def distribution_sizes(site_packages: Path) -> list[tuple[float, str]]:
    sizes = []
    for dist_info in site_packages.glob("*.dist-info"):
        record = dist_info / "RECORD"
        if not record.exists():
            continue
        total = 0
        for line in record.read_text().splitlines():
            path = site_packages / line.split(",")[0]
            if path.is_file():
                total += path.stat().st_size
        sizes.append((total / 1e6, dist_info.name.split("-")[0]))
    return sorted(sizes, reverse=True)


def fresh_install(registry: bool) -> None:
    wheelhouse = wheelhouse_for(sys.executable)
    with tempfile.TemporaryDirectory(prefix="pi-lsp-install-bench-") as scratch:
        scratch_path = Path(scratch)
        wheel = build_wheel(scratch_path / "dist", wheelhouse)
        venv = scratch_path / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        environment = dict(os.environ) if registry else offline_pip_environment(wheelhouse)
        started = time.monotonic()
        subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
            check=True,
            env=environment,
        )
        seconds = time.monotonic() - started
        listed = json.loads(
            subprocess.run(
                [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        packages = [
            package["name"] for package in listed if package["name"] not in ("pip", "setuptools")
        ]
        (site_packages,) = (venv / "lib").glob("python3*/site-packages")
        source = "the package registry" if registry else "the wheelhouse (offline)"
        print(f"(a) fresh install of {wheel.name} from {source}, Python {sys.version.split()[0]}")
        print(f"    pip install: {seconds:.1f} s")
        print(
            f"    virtualenv: {megabytes(venv):.0f} MB, "
            f"site-packages {megabytes(site_packages):.0f} MB"
        )
        print(f"    packages: {len(packages)} (pi-lsp and {len(packages) - 1} dependencies)")
        print("(b) the biggest distributions (MB installed):")
        for size, name in distribution_sizes(site_packages)[:8]:
            print(f"    {size:6.1f}  {name}")


def bundle() -> None:
    libs = ROOT / "editors" / "vscode" / "bundled" / "libs"
    if not (libs / "manifest.json").exists():
        print("(c) no bundle: run `npm run package` in editors/vscode first")
        return
    manifest = json.loads((libs / "manifest.json").read_text())
    print(f"(c) the VS Code bundle for {manifest['target']}: {megabytes(libs):.0f} MB on disk")
    for folder in sorted(path for path in libs.iterdir() if path.is_dir()):
        print(f"    {megabytes(folder):6.1f} MB  {folder.name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--registry", action="store_true", help="install from the package registry")
    parser.add_argument("--bundle", action="store_true", help="also measure the VS Code bundle")
    arguments = parser.parse_args()
    fresh_install(arguments.registry)
    if arguments.bundle:
        bundle()


if __name__ == "__main__":
    main()
