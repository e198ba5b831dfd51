"""A plugin that fails while importing: simsample must list it with its error and carry on."""

raise RuntimeError("this plugin is broken on purpose")
