"""Profile input and output shared by the readers: tables, files, names, joins, the Kineto and SQLite scanners' Python
sides."""
