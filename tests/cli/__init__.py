"""The command line: errors, agreement with the library, startup, progress, the first hour."""
