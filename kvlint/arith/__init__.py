"""Pure KV-cache arithmetic: no files, no network, no printing."""
