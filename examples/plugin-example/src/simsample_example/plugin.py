"""What simsample loads through the ``simsample`` entry point: one hook per kind of plugin."""

from __future__ import annotations

from simsample.sdk import hookimpl
from simsample_example.adapter import ListSim
from simsample_example.reader import KernelLog
from simsample_example.sampler import EveryNth


@hookimpl
def register_samplers(register):
    register(EveryNth())


@hookimpl
def register_readers(register):
    register(KernelLog())


@hookimpl
def register_adapters(register):
    register(ListSim())
