"""llama.cpp (llama-server): everything kvlint knows of this engine, in one home."""
