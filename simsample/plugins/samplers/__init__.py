"""Built-in samplers, registered exactly like third-party plugins."""
