"""The time extensions' hooks take, added up per hook (the per-turn figures of ``bench/``)."""

from __future__ import annotations

from collections import defaultdict

import attrs


@attrs.define
class HookTimings:
    """Seconds spent in each hook and how many calls, since the server started."""

    seconds: dict[str, float] = attrs.Factory(lambda: defaultdict(float))
    calls: dict[str, int] = attrs.Factory(lambda: defaultdict(int))

    def total(self) -> float:
        return sum(self.seconds.values())
