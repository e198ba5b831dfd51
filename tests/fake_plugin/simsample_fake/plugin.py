"""A sampler and a command, registered through the ``simsample`` entry-point group."""

from __future__ import annotations

import click
import numpy as np

from simsample.sdk import Param, Plan, Sampler, hookimpl, make_cluster


class EveryNth(Sampler):
    name = "fake-every-nth"
    version = "0.0.1"
    description = "every n-th launch (test plugin)"
    params = (Param("n", int, 2, "stride", minimum=1),)

    def plan(self, workload, params, seed):
        n = len(workload)
        rows = np.arange(0, n, params["n"])
        values = workload.values("auto")
        ids = workload.kernels["kernel_id"].to_numpy()
        cluster = make_cluster(0, "all", np.arange(n), rows, values, ids)
        return Plan.build(
            workload,
            self,
            params,
            seed,
            metric=workload.default_metric(),
            rows=rows,
            weights=np.full(len(rows), n / len(rows)),
            cluster_of_row=np.zeros(len(rows), int),
            clusters=[cluster],
            kind="stratified",
        )


@hookimpl
def register_samplers(register):
    register(EveryNth())


@hookimpl
def register_commands(cli):
    @click.command("fake-hello")
    def hello():
        """Say hello (test plugin)."""
        click.echo("hello from simsample-fake-plugin")

    cli.add_command(hello)
