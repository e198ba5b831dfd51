"""Built-in profile readers, registered exactly like third-party plugins."""
