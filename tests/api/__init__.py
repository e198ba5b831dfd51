"""The public Python API: its checks and its agreement with the command line."""
