"""SGLang: everything kvlint knows of this engine, in one home."""
