"""Each engine's own accounting of the KV cache, version-aware."""
