"""Migrations of legacy session files to pi's current format (v1 → v2 → v3), as pi 0.84.2 runs them.

v1 files have no entry ids: every entry gets a fresh 8-hex id and the previous entry as parent, and
a compaction's ``firstKeptEntryIndex`` (an index into the file's lines) becomes
``firstKeptEntryId``. v2 files may hold ``hookMessage`` messages, renamed to ``custom`` in v3.
Entries are mutated in place; new keys land at the end of each object, where JavaScript's assignment
puts them.
"""

from __future__ import annotations

from pi_lsp.session.entries import CURRENT_SESSION_VERSION, new_entry_id


def migrate_to_current_version(file_entries: list[dict]) -> bool:
    """Bring header + entries to the current version; ``True`` when anything changed."""
    header = next((entry for entry in file_entries if entry.get("type") == "session"), None)
    version = header.get("version") if header else None
    if version is None:
        version = 1
    if not isinstance(version, (int, float)) or version >= CURRENT_SESSION_VERSION:
        return False
    if version < 2:
        _migrate_v1_to_v2(file_entries)
    if version < 3:
        _migrate_v2_to_v3(file_entries)
    return True


def _migrate_v1_to_v2(file_entries: list[dict]) -> None:
    used_ids: set[str] = set()
    previous_id: str | None = None
    for entry in file_entries:
        if entry.get("type") == "session":
            entry["version"] = 2
            continue
        # pi checks uniqueness against a set it never fills; filling it here costs nothing and
        # can only make ids more unique.
        entry["id"] = new_entry_id(used_ids)
        used_ids.add(entry["id"])
        entry["parentId"] = previous_id
        previous_id = entry["id"]
        if entry.get("type") == "compaction" and "firstKeptEntryIndex" in entry:
            index = entry["firstKeptEntryIndex"]
            if (
                isinstance(index, int)
                and not isinstance(index, bool)
                and 0 <= index < len(file_entries)
            ):
                target = file_entries[index]
                if target.get("type") != "session" and "id" in target:
                    entry["firstKeptEntryId"] = target["id"]
            if isinstance(index, (int, float)) and not isinstance(index, bool):
                del entry["firstKeptEntryIndex"]


def _migrate_v2_to_v3(file_entries: list[dict]) -> None:
    for entry in file_entries:
        if entry.get("type") == "session":
            entry["version"] = 3
            continue
        message = entry.get("message")
        if (
            entry.get("type") == "message"
            and isinstance(message, dict)
            and message.get("role") == "hookMessage"
        ):
            message["role"] = "custom"
