"""The agent's procedural memory, loaded the way pi 0.84.2 loads it: context files, SYSTEM.md,
skills, prompt templates and settings.

Everything here is pure file reading: no watching, no LSP. Problems come back as
``ResourceDiagnostic`` values next to whatever still loaded; nothing here raises over a broken
file. ``snapshot.load_resources`` composes the pieces; ``snapshot.diff_snapshots`` says what a
reload changed.
"""
