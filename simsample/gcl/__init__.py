"""Per-warp instruction streams (:mod:`simsample.gcl.streams`): what a simulator's adapter reads
from its traces for GCL-Sampler (``Adapter.instruction_traces``), in the SDK. The sampler's own
machinery (graphs, the network, clustering) is the sampler's: :mod:`simsample.plugins.samplers._gcl`.
"""
