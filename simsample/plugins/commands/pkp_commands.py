"""Built-in plugin: the ``simsample pkp`` command group (Principal Kernel Projection tools)."""

from __future__ import annotations

from typing import Any

from simsample.sdk import hookimpl


@hookimpl
def register_commands(cli: Any) -> None:
    from simsample.pkp.cli import pkp_group

    cli.add_command(pkp_group)
