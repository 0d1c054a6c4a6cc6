"""Resource benchmarks: file write → ``pi/resourcesChanged`` latency, and loading 500 skills.

The latency runs the real server (``python -m pi_lsp``) over stdio with pi-lsp's own client, edits
AGENTS.md and adds skills, and measures the time from the write to the notification (median of
20; goal under 250 ms). The load time builds 500 skill folders and times ``load_resources``
(median of 5; goal under 200 ms), then a reload of the same 500 skills through the server's
parsed-file cache with one skill changed (what a watched edit costs).
Run: ``.venv/bin/python bench/resources_bench.py``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from pi_lsp.client import PiClient
from pi_lsp.resources.snapshot import load_resources

SKILL = (
    "---\nname: {name}\ndescription: Skill number {index} for the benchmark.\n---\n"
    "Do task {index}.\n"
)


async def write_to_notification_latency(workspace: Path, home: Path, runs: int = 20) -> list[float]:
    arrived: asyncio.Queue[float] = asyncio.Queue()
    client = PiClient("resources-bench")
    client.feature("pi/resourcesChanged")(lambda params: arrived.put_nowait(time.perf_counter()))
    environment = {**os.environ, "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent")}
    await client.start_server(env=environment)
    await client.initialize_workspace(workspace)
    await asyncio.sleep(1.0)  # let the watcher start
    latencies = []
    try:
        for index in range(runs):
            while not arrived.empty():
                arrived.get_nowait()
            written = time.perf_counter()
            if index % 2:
                folder = workspace / ".pi" / "skills" / f"bench-{index}"
                folder.mkdir(parents=True)
                (folder / "SKILL.md").write_text(SKILL.format(name=f"bench-{index}", index=index))
            else:
                (workspace / "AGENTS.md").write_text(f"Rule number {index}.\n")
            received = await asyncio.wait_for(arrived.get(), 10)
            latencies.append((received - written) * 1000)
            await asyncio.sleep(0.2)
    finally:
        await client.close()
    return latencies


def load_time_for_500_skills(root: Path, runs: int = 5) -> list[float]:
    workspace, agent_dir = root / "many", root / "agent-empty"
    for index in range(500):
        folder = workspace / ".pi" / "skills" / f"skill-{index}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(SKILL.format(name=f"skill-{index}", index=index))
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        snapshot = load_resources(workspace, agent_dir, trusted=True, home=root)
        timings.append((time.perf_counter() - start) * 1000)
    assert len(snapshot.skills) == 500
    return timings


def cached_reload_time_for_500_skills(root: Path, runs: int = 5) -> list[float]:
    """A reload after one SKILL.md changed, with the cache the server keeps between reloads."""
    from pi_lsp.resources.files import ParsedFileCache

    workspace, agent_dir = root / "many", root / "agent-empty"
    cache = ParsedFileCache()
    load_resources(workspace, agent_dir, trusted=True, home=root, cache=cache)
    timings = []
    for run in range(runs):
        (workspace / ".pi" / "skills" / "skill-7" / "SKILL.md").write_text(
            SKILL.format(name="skill-7", index=1000 + run)
        )
        parsed_before = cache.parsed
        start = time.perf_counter()
        snapshot = load_resources(workspace, agent_dir, trusted=True, home=root, cache=cache)
        timings.append((time.perf_counter() - start) * 1000)
        assert cache.parsed - parsed_before == 1 and len(snapshot.skills) == 500
    return timings


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        workspace, home = root / "project", root / "home"
        workspace.mkdir()
        home.mkdir()
        (workspace / "AGENTS.md").write_text("Rule.\n")
        latencies = asyncio.run(write_to_notification_latency(workspace, home))
        loads = load_time_for_500_skills(root)
        reloads = cached_reload_time_for_500_skills(root)
    print("resources benchmark")
    print(
        f"  write -> pi/resourcesChanged: median {statistics.median(latencies):.0f} ms, "
        f"max {max(latencies):.0f} ms over {len(latencies)} writes (goal: median under 250 ms)"
    )
    print(
        f"  load 500 skills: median {statistics.median(loads):.0f} "
        f"ms over {len(loads)} loads (goal: under 200 ms)"
    )
    print(
        f"  reload 500 skills, one changed (cached): median {statistics.median(reloads):.0f} ms "
        f"over {len(reloads)} reloads "
        f"({statistics.median(loads) / statistics.median(reloads):.1f}x "
        "faster than a full load)"
    )


if __name__ == "__main__":
    main()
