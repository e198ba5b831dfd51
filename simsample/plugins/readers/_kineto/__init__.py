"""The Kineto reader's own parts (:mod:`simsample.plugins.readers.kineto`): the byte scanner that
finds kernel events without parsing the whole document (:mod:`.scan`), the decoder that builds
typed objects from them (:mod:`.decode`), and the compiled extractor's wrapper (:mod:`.native`,
over ``simsample._kineto_events``).

Private to that reader (the leading ``_`` keeps the plugin host from loading it as a plugin).
"""
