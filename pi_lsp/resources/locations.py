"""Where resources of one kind (skills, prompt templates) are looked for, and how the places join:
locations come in precedence order, and of two resources with one name the first wins, the other
becoming a warning on its file."""

from __future__ import annotations

from pathlib import Path
from typing import Generic, TypeVar

import attrs

from pi_lsp.protocol import Scope
from pi_lsp.resources.diagnostics import ResourceDiagnostic, warning
from pi_lsp.resources.patterns import ResourcePatterns

Resource = TypeVar("Resource")


@attrs.frozen
class ResourceLocation:
    """One place to look, in precedence order."""

    path: Path
    source: Scope
    explicit: bool = False
    """Named in settings: a single ``.md`` file is accepted (and, for skills, a missing path is
    reported)."""
    patterns: ResourcePatterns = attrs.field(factory=ResourcePatterns)
    """The include/exclude patterns of the settings file that governs this location."""


class FirstNameWins(Generic[Resource]):
    """The resources kept so far by name; a later one with a name already taken is a collision."""

    def __init__(self, described: str) -> None:
        self._described = described
        """How a collision names the resource, ``{}`` standing for its name."""
        self._chosen: dict[str, tuple[Resource, str]] = {}
        self.collisions: list[ResourceDiagnostic] = []

    def offer(self, name: str, file_path: str, resource: Resource) -> bool:
        """Keep ``resource`` unless its name is taken (then warn on its file); whether it was."""
        winner = self._chosen.get(name)
        if winner is not None:
            what = self._described.format(name)
            message = f"{what} collides with {winner[1]}, which wins"
            self.collisions.append(warning(file_path, 1, message))
            return False
        self._chosen[name] = (resource, file_path)
        return True

    def kept(self) -> tuple[Resource, ...]:
        return tuple(resource for resource, _ in self._chosen.values())
