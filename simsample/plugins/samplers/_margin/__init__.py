"""The margin sampler's own parts (:mod:`simsample.plugins.samplers.margin`): pooled strata and
skewness-aware sizes (:mod:`.pooling`, its ``pool`` and ``max_skew`` options).

Private to that sampler (the leading ``_`` keeps the plugin host from loading it as a plugin).
"""
