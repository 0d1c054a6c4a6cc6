"""Session-core benchmark: pi-lsp next to pi 0.84.2 on the same files, in the same run.

For sessions of 1k, 10k and 100k entries (the largest about 100 MB; generated once into
``.bench-data/``) it measures, each side in a fresh process: open + index, context at the leaf,
compaction planning at the leaf, appending 10k entries without fsync, and peak memory. It prints a
table with pi's figure, ours and the ratio (pi / pi-lsp: above 1 means pi-lsp is faster or
smaller). Run it with ``make bench``; pi comes from ``tests/reference``
(``make install-reference``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / ".bench-data"
NODE = ROOT / "tests" / "reference" / "node_modules" / ".bin" / "node"
SIZES = (1_000, 10_000, 100_000)

# (label, our key, pi's key, higher is better)
ROWS = (
    ("open + index (ms)", "openMs", "openMs", False),
    ("context at leaf (ms)", "contextMs", "contextMs", False),
    ("open + context (ms)", "openPlusContextMs", "openPlusContextMs", False),
    ("plan compaction, chars4 (ms)", "planCompactionChars4Ms", "prepareCompactionMs", False),
    ("plan compaction, tiktoken (ms)", "planCompactionTiktokenMs", None, False),
    ("appends per second", "appendsPerSecond", "appendsPerSecond", True),
    ("peak RSS (MB)", "peakRssMb", "peakRssMb", False),
)


def run_json(command: list[str]) -> dict:
    completed = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(completed.stdout.strip().splitlines()[-1])


def session_file(entries: int) -> Path:
    path = DATA / f"session-{entries}.jsonl"
    if not path.exists():
        DATA.mkdir(exist_ok=True)
        subprocess.run(
            [sys.executable, str(ROOT / "bench" / "generate_session.py"), str(path), str(entries)],
            check=True,
        )
    return path


def measure(entries: int, repeats: int) -> tuple[dict, dict]:
    """Median of ``repeats`` fresh processes per side, alternating so both see the same machine."""
    path = session_file(entries)
    our_runs, pi_runs = [], []
    for _ in range(repeats):
        our_runs.append(
            run_json([sys.executable, str(ROOT / "bench" / "measure_ours.py"), str(path)])
        )
        pi_runs.append(run_json([str(NODE), str(ROOT / "bench" / "pi_bench.mjs"), str(path)]))
    return median_figures(our_runs), median_figures(pi_runs)


def median_figures(runs: list[dict]) -> dict:
    for figures in runs:
        figures["openPlusContextMs"] = round(figures["openMs"] + figures["contextMs"], 1)
    keys = {
        key for figures in runs for key, value in figures.items() if isinstance(value, (int, float))
    }
    return {
        key: statistics.median(figures[key] for figures in runs if key in figures) for key in keys
    }


def print_table(entries: int, size_mb: float, ours: dict, pi: dict) -> None:
    print(f"\n{entries:,} entries ({size_mb:.1f} MB)")
    print(f"  {'':32} {'pi 0.84.2':>12} {'pi-lsp':>12} {'ratio':>8}")
    for label, our_key, pi_key, higher_is_better in ROWS:
        ours_value = ours.get(our_key)
        pi_value = pi.get(pi_key) if pi_key else None
        ratio = ""
        if (
            isinstance(ours_value, (int, float))
            and isinstance(pi_value, (int, float))
            and ours_value
            and pi_value
        ):
            ratio = f"{(ours_value / pi_value if higher_is_better else pi_value / ours_value):.2f}x"
        print(f"  {label:32} {_cell(pi_value):>12} {_cell(ours_value):>12} {ratio:>8}")


def _cell(value: object) -> str:
    if value is None:
        return "-"
    return f"{value:,.1f}" if isinstance(value, float) else f"{value:,}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument(
        "--repeats", type=int, default=3, help="fresh processes per side and size (median)"
    )
    arguments = parser.parse_args()
    if not NODE.exists():
        sys.exit("pi 0.84.2 is not installed: run `make install-reference` first")
    print(
        f"pi-lsp session core vs pi 0.84.2, median of {arguments.repeats} runs each "
        "(ratio = how many times better pi-lsp is)"
    )
    for entries in arguments.sizes:
        ours, pi = measure(entries, arguments.repeats)
        print_table(entries, session_file(entries).stat().st_size / 1e6, ours, pi)
        print(
            f"  context messages: pi {pi.get('contextMessages'):.0f}, "
            f"pi-lsp {ours.get('contextMessages'):.0f}"
        )


if __name__ == "__main__":
    main()
