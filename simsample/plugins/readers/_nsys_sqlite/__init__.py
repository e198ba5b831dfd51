"""The Nsight Systems SQLite reader's own parts (:mod:`simsample.plugins.readers.nsys_sqlite`).

Private to that reader (the leading ``_`` keeps the plugin host from loading it as a plugin), and
kept apart from the reader's module so that the worker processes that import
:mod:`.columns` start without importing the reader and what it needs.
"""
