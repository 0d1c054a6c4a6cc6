"""Integration tests: real components (litellm's HTTP
client, subprocesses) against local servers."""
