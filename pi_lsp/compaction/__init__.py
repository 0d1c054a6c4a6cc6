"""Compaction and branch-summary planning: pure
functions over session entries, no I/O and no LLM."""
