"""Hostile inputs: the catalogue of what users can get wrong, and the limits."""
