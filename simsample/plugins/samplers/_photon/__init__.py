"""The photon sampler's own parts (:mod:`simsample.plugins.samplers.photon`): the GPU basic-block
vectors built from per-warp trace features (:mod:`.bbv`) and the GPU models whose SM count and
warp slots the vectors are scaled by (:mod:`.gpus`).

Private to that sampler (the leading ``_`` keeps the plugin host from loading it as a plugin).
"""
