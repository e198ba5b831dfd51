"""An example simsample plugin: a sampler, a profile reader and a simulator adapter.

Each lives in its own module and imports only :mod:`simsample.sdk` and the public
:mod:`simsample` API; :mod:`simsample_example.plugin` registers them.
"""

__version__ = "0.1.0"
