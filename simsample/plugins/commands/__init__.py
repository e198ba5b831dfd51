"""Built-in command plugins."""
