"""Handlers of ``pi/resources`` and ``pi/reload``, and the shape of ``pi/resourcesChanged``."""

from __future__ import annotations

from typing import Any

from pi_lsp import protocol
from pi_lsp.handlers.base import pi_request
from pi_lsp.resources.snapshot import ResourceChanges, ResourceSnapshot
from pi_lsp.services import Services


@pi_request(protocol.RESOURCES)
def on_resources(services: Services, params: protocol.NoParams) -> dict[str, Any]:
    return snapshot_document(services.agent.resources.snapshot)


@pi_request(protocol.RELOAD)
def on_reload(services: Services, params: protocol.NoParams) -> dict[str, Any]:
    return changes_document(services.agent.resources.reload())


def snapshot_document(snapshot: ResourceSnapshot) -> dict[str, Any]:
    return {
        "contextFiles": [item.path for item in snapshot.context_files],
        "systemPrompt": snapshot.system_prompt.path if snapshot.system_prompt else None,
        "appendSystemPrompt": snapshot.append_system_prompt.path
        if snapshot.append_system_prompt
        else None,
        "skills": [
            {
                "name": skill.name,
                "description": skill.description,
                "path": skill.file_path,
                "source": skill.source,
                "disableModelInvocation": skill.disable_model_invocation,
            }
            for skill in snapshot.skills
        ],
        "templates": [
            {
                "name": template.name,
                "description": template.description,
                "path": template.file_path,
                "source": template.source,
            }
            for template in snapshot.templates
        ],
        "diagnostics": [
            {
                "path": item.path,
                "line": item.line,
                "message": item.message,
                "severity": item.severity,
            }
            for item in snapshot.diagnostics
        ],
    }


def changes_document(changes: ResourceChanges) -> dict[str, Any]:
    def refs(items) -> list[dict[str, str]]:
        return [{"kind": ref.kind, "name": ref.name, "path": ref.path} for ref in items]

    return {
        "added": refs(changes.added),
        "changed": refs(changes.changed),
        "removed": refs(changes.removed),
    }
