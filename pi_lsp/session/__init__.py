"""Session files: pi's append-only JSONL tree, its
entries, loading, writing and context building."""
