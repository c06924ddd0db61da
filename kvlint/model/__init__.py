"""The model layer: config.json -> ModelSpec, resolution, and the built-in catalog."""
