"""The agent: open sessions, their turn loops, and the events they emit (no pygls, no litellm)."""
