"""Built-in plugins: samplers and profile readers, registered exactly like third-party ones."""
