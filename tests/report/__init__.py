"""The HTML report: its parts and the page in a real browser."""
