"""simsample plugin entry point: registers the Accel-Sim adapter and its trace-folder reader."""

from __future__ import annotations

from simsample.sdk import hookimpl


@hookimpl
def register_adapters(register):
    from simsample_accelsim.adapter import AccelSimAdapter

    register(AccelSimAdapter())


@hookimpl
def register_readers(register):
    from simsample_accelsim.reader import AccelSimReader

    register(AccelSimReader())


@hookimpl
def register_commands(cli):
    from simsample_accelsim.tracecli import accelsim_group

    cli.add_command(accelsim_group)
