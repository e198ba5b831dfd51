"""Split runs on the local, Dask and SLURM executors."""
