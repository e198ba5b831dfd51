"""GCL-Sampler's machinery (the ``gcl`` sampler, :mod:`simsample.plugins.samplers.gcl`).

``graphs`` (the relational graph of a launch, numpy), ``build`` (graphs for a workload: cached
per trace file, in parallel), ``cluster`` (k-means with the silhouette-chosen K) import numpy and
scikit-learn only; ``model`` and ``train`` need the ``gcl`` extra (torch, torch-geometric) and are
imported only when a gcl plan is made; ``scratch`` keeps torch's generated files in a folder of
its own. The per-warp instruction streams they start from are an adapter's to read
(:mod:`simsample.gcl.streams`, in the SDK).

Private to that sampler (the leading ``_`` keeps the plugin host from loading it as a plugin).
"""
