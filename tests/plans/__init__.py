"""Plans and workloads: the plan file, launch tables, profile-first runs, joins."""
