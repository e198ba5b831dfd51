"""GCL-Sampler's machinery (the ``gcl`` sampler in :mod:`simsample.plugins.samplers.gcl`).

``streams`` (per-warp instruction streams an adapter reads), ``graphs`` (the relational graph of a
launch, numpy), ``build`` (graphs for a workload: cached per trace file, in parallel), ``cluster``
(k-means with the silhouette-chosen K) import numpy and scikit-learn only; ``model`` and ``train``
need the ``gcl`` extra (torch, torch-geometric) and are imported only when a gcl plan is made.
"""
