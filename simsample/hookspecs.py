"""Hook specifications: the reference documentation of what a simsample plugin can provide.

A plugin is a module or object with functions named like the hooks below, decorated with
``simsample.hookimpl``. Third-party plugins are found through the ``simsample`` entry-point
group::

    [project.entry-points.simsample]
    mysim = "simsample_mysim.plugin"

Built-in samplers and readers are plugins of exactly the same kind (``simsample/plugins/``).
A plugin that fails to import or to register is recorded with its error and shown by
``simsample plugins``; it never takes the command line down.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import click

    from simsample.plugin_base import Adapter, Reader, Sampler

hookspec = pluggy.HookspecMarker("simsample")
hookimpl = pluggy.HookimplMarker("simsample")


@hookspec
def register_samplers(register: Callable[[Sampler], None]) -> None:
    """Register sampler plugins.

    Call ``register(sampler)`` once per :class:`simsample.plugin_base.Sampler` instance. The sampler's
    ``name`` is what users pass to ``simsample plan --sampler NAME``; names must be unique
    across all plugins (a duplicate is recorded as the later plugin's error). Parameters are
    declared on the sampler (:class:`simsample.plugin_base.Param`) so that ``simsample samplers`` can
    list them with their defaults.

    Example::

        @hookimpl
        def register_samplers(register):
            register(MySampler())
    """


@hookspec
def register_readers(register: Callable[[Reader], None]) -> None:
    """Register profile readers.

    Call ``register(reader)`` once per :class:`simsample.plugin_base.Reader`. When the user does not
    name a format, every reader's ``detect(path, head)`` is asked in registration order and the
    first that accepts the file reads it, so ``detect`` must look at content (``head`` holds the
    first decompressed bytes), not only at the file name. ``--format NAME`` picks a reader by
    its ``name`` directly.
    """


@hookspec
def register_adapters(register: Callable[[Adapter], None]) -> None:
    """Register simulator adapters.

    Call ``register(adapter)`` once per :class:`simsample.plugin_base.Adapter`. The public API
    calls its methods (``simsample.apply`` its ``apply``, ``simsample.collect`` its ``collect``)
    and reads its declarations: ``metrics`` (what each results column is: a count, a ratio of
    two counts, or not estimable; ``simsample.estimate`` follows them), ``apply_options`` and
    ``collect_options`` (typed keyword options, checked before the method is called). On the
    command line, ``simsample collect|estimate --sim NAME`` are built from those declarations;
    ``apply``, ``run`` and ``profile features --sim NAME`` hand the rest of their command line to
    the click command the adapter returns for that verb from ``commands()``, which parses it and
    calls the API. An adapter is normally its own distribution, registered through the
    ``simsample`` entry-point group.
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add commands to the ``simsample`` command line.

    ``cli`` is the top-level :class:`click.Group`; add commands or groups with
    ``cli.add_command(...)``. Use it for tools that belong to one plugin (for example an
    adapter's own ``simsample hyfiss pick-sm``). Command names must not clash with existing
    ones; a clash is recorded as this plugin's error.
    """
