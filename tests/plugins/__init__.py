"""The plugin host, the SDK, the conformance kit and what adapters share."""
