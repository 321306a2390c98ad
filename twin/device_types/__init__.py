"""Device type specifications (YAML), loaded by `twin.catalog`."""
