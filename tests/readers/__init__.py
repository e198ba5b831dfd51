"""Profile readers: each format, the compiled scanners against their Python twins, names."""
