"""Reading YAML and JSON with the position of every value (a package: `pip install .` needs it)."""
