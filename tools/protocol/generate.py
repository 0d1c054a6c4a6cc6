"""``make protocol`` and ``make protocol-check``: write the protocol's mirrors, or check them.

``python -m tools.protocol.generate`` writes every mirror from ``pi_lsp/protocol.py``;
``--check`` writes them into a temporary folder instead and fails, printing the differences, when
a mirror in the tree is not what the generator makes of protocol.py (someone edited it by hand, or
edited protocol.py without running ``make protocol``). ``--root`` names the checkout to work on.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from tools.protocol.lua import lua_module
from tools.protocol.markdown import MissingBlockError, fill_blocks
from tools.protocol.schema import JsonSchema, protocol_schema
from tools.protocol.typescript import typescript_module

ROOT = Path(__file__).resolve().parents[2]

MIRRORS: dict[str, Callable[[JsonSchema, str], str]] = {
    "editors/vscode/src/protocol.generated.ts": lambda schema, _: typescript_module(schema),
    "editors/neovim/lua/pi/protocol.lua": lambda schema, _: lua_module(schema),
    "docs/protocol.md": lambda schema, current: fill_blocks(current, schema),
}
"""Each mirror's path in the checkout, and how it is made from the schema (and its current text:
the document keeps its prose)."""


def generate(root: Path, into: Path) -> list[str]:
    """Write every mirror of ``root`` under ``into``; the relative paths written."""
    schema = protocol_schema()
    for relative, make in MIRRORS.items():
        source = root / relative
        current = source.read_text(encoding="utf-8") if source.exists() else ""
        target = into / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(make(schema, current), encoding="utf-8")
    return list(MIRRORS)


def differences(root: Path) -> list[str]:
    """A unified diff per mirror of ``root`` that differs from what the generator makes."""
    with tempfile.TemporaryDirectory(prefix="pi-lsp-protocol-") as folder:
        generated = Path(folder)
        found = []
        for relative in generate(root, generated):
            wanted = (generated / relative).read_text(encoding="utf-8")
            path = root / relative
            present = path.read_text(encoding="utf-8") if path.exists() else ""
            if present != wanted:
                diff = difflib.unified_diff(
                    present.splitlines(keepends=True),
                    wanted.splitlines(keepends=True),
                    f"{relative} (in the tree)",
                    f"{relative} (generated)",
                )
                found.append("".join(diff))
        return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make protocol", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when a mirror differs")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    arguments = parser.parse_args(argv)
    try:
        if not arguments.check:
            for relative in generate(arguments.root, arguments.root):
                print(f"wrote {relative}")
            return 0
        found = differences(arguments.root)
    except (MissingBlockError, RuntimeError) as error:
        print(f"make protocol: {error}", file=sys.stderr)
        return 1
    if found:
        sys.stdout.writelines(found)
        print(
            "\nmake protocol-check: the mirrors above differ from pi_lsp/protocol.py. Edit "
            "protocol.py (not the mirrors) and run `make protocol`.",
            file=sys.stderr,
        )
        return 1
    print("make protocol-check: every mirror matches pi_lsp/protocol.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
