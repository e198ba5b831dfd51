"""GCL-Sampler's network, training and plans: needs the ``gcl`` extra (CI installs it and sets
SIMSAMPLE_REQUIRE_GCL=1, so a missing torch fails there instead of skipping)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

if os.environ.get("SIMSAMPLE_REQUIRE_GCL") != "1":
    pytest.importorskip("torch")
    pytest.importorskip("torch_geometric")

import torch  # noqa: E402

from simsample.cli import EXIT_USER
from simsample.cli import run as cli_run  # noqa: E402
from simsample.gcl.streams import WarpSelection  # noqa: E402
from simsample.plugins.samplers._gcl.graphs import build_graph  # noqa: E402
from simsample.plugins.samplers._gcl.model import Encoder, GraphTensors, ProjectionHead, collate  # noqa: E402
from simsample.plugins.samplers._gcl.train import (  # noqa: E402
    TrainConfig,
    augment,
    info_nce,
    train_and_embed,
    vocabulary,
)
from simsample_accelsim.warps import read_warps  # noqa: E402
from tests.helpers import ROOT, shared_path  # noqa: E402


@pytest.fixture(scope="module")
def hetero_graphs():
    hetero = shared_path("simulators", "accelsim", "hetero")
    return [build_graph(read_warps(hetero / f"kernel-{k}.traceg.xz", WarpSelection(warps=2))) for k in range(1, 13)]


def test_encoder_and_head_shapes(hetero_graphs):
    vocab = vocabulary(hetero_graphs)
    batch = collate([GraphTensors(g, vocab) for g in hetero_graphs[:3]])
    enc = Encoder(len(vocab))
    assert [c.num_bases for c in enc.convs] == [2, 2, 2] and [c.num_relations for c in enc.convs] == [4, 4, 4]
    assert [(c.in_channels, c.out_channels) for c in enc.convs] == [(64, 128), (128, 128), (128, 256)]
    x = enc.features(batch.kind, batch.token, batch.pos, batch.stats)
    assert x.shape == (len(batch.kind), 64)
    z = enc(batch)
    assert z.shape == (3, 256)
    assert ProjectionHead()(z).shape == (3, 64)
    small = Encoder(len(vocab), hidden=32, out=48, bases=1)
    assert small(batch).shape == (3, 48)


def test_readout_averages_warps_not_nodes(hetero_graphs):
    vocab = vocabulary(hetero_graphs)
    enc = Encoder(len(vocab)).eval()
    g = GraphTensors(hetero_graphs[0], vocab)
    with torch.no_grad():
        h = enc.nodes(enc.features(g.kind, g.token, g.pos, g.stats), g.edge_index, g.edge_type)
        want = torch.stack([h[g.warp == w].mean(0) for w in torch.unique(g.warp)]).mean(0)
        got = enc(collate([g]))[0]
    assert torch.allclose(got, want, atol=1e-5)


def test_symmetric_info_nce():
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(8, 16, generator=gen), torch.randn(8, 16, generator=gen)
    assert torch.isclose(info_nce(a, b, 0.05), info_nce(b, a, 0.05))
    assert info_nce(a, a, 0.05) < info_nce(a, a[torch.randperm(8, generator=gen)], 0.05)  # aligned positives cost less
    s = torch.nn.functional.normalize(a, dim=1) @ torch.nn.functional.normalize(b, dim=1).T / 0.5
    want = 0.5 * (
        torch.nn.functional.cross_entropy(s, torch.arange(8)) + torch.nn.functional.cross_entropy(s.T, torch.arange(8))
    )
    assert torch.isclose(info_nce(a, b, 0.5), want)


def test_augmented_views_are_valid_subgraphs(hetero_graphs):
    vocab = vocabulary(hetero_graphs)
    g = GraphTensors(hetero_graphs[1], vocab)
    before = g.edge_index.clone()
    gen = torch.Generator().manual_seed(3)
    cfg = TrainConfig(node_drop=0.5, edge_drop=0.5)
    shrunk = False
    for _ in range(20):
        v, _noise = augment(g, cfg, gen)
        assert v.edge_index.shape[1] == v.edge_type.shape[0]
        assert v.edge_index.numel() == 0 or int(v.edge_index.max()) < v.n_nodes
        shrunk |= v.n_nodes < g.n_nodes or v.edge_type.shape[0] < g.edge_type.shape[0]
    assert shrunk and torch.equal(g.edge_index, before)  # the original is untouched


def test_short_training_is_deterministic_per_seed(hetero_graphs):
    cfg = TrainConfig(epochs=2, hidden=32, out=32, proj_hidden=16, proj_out=8)
    a = train_and_embed(hetero_graphs, cfg, seed=1)
    b = train_and_embed(hetero_graphs, cfg, seed=1)
    c = train_and_embed(hetero_graphs, cfg, seed=2)
    assert a.embeddings.shape == (12, 32)
    assert np.array_equal(a.embeddings, b.embeddings)
    assert not np.array_equal(a.embeddings, c.embeddings)
    assert (a.train_launches, a.validation_launches) == (10, 2)  # the 80/20 split
    assert len(a.train_loss) == 2 and len(a.validation_loss) == 2 and all(np.isfinite(a.train_loss))
    assert a.distinct_graphs <= 12


def test_early_stopping_keeps_the_best_epochs_weights(hetero_graphs):
    """Training stops once the validation loss has not improved for ``patience`` epochs; up to
    there it is the run without early stopping, epoch for epoch, and where that run's best epoch
    came before the stop, both embed every launch the same."""
    small = {"hidden": 32, "out": 32, "proj_hidden": 16, "proj_out": 8, "epochs": 12}
    full = train_and_embed(hetero_graphs, TrainConfig(patience=0, **small), seed=3)
    early = train_and_embed(hetero_graphs, TrainConfig(patience=2, **small), seed=3)
    assert full.epochs_run == 12
    best_so_far, stop = 0, 12
    for e, v in enumerate(full.validation_loss):
        if v < full.validation_loss[best_so_far]:
            best_so_far = e
        if e - best_so_far >= 2:
            stop = e + 1
            break
    assert early.epochs_run == stop
    assert early.validation_loss == full.validation_loss[:stop] and early.train_loss == full.train_loss[:stop]
    assert early.best_epoch == int(np.argmin(full.validation_loss[:stop]))
    assert np.array_equal(early.embeddings, full.embeddings) == (full.best_epoch == early.best_epoch)


def test_an_epoch_trains_on_at_most_epoch_launches(hetero_graphs, monkeypatch):
    import simsample.plugins.samplers._gcl.train as train_module

    seen: list[int] = []
    real = train_module._views

    def views(graphs, cfg, gen):
        seen.append(len(graphs))
        return real(graphs, cfg, gen)

    monkeypatch.setattr(train_module, "_views", views)
    cfg = TrainConfig(
        hidden=16, out=16, proj_hidden=8, proj_out=8, epochs=2, batch=3, epoch_launches=4, validation_max=2
    )
    r = train_and_embed(hetero_graphs, cfg, seed=0)
    assert (r.train_launches, r.validation_launches) == (10, 2)
    # per epoch: two views of the 4 launches drawn (one batch of 3 and a last one of 1 joined to it), then the
    # validation's two
    assert seen == [4, 4, 2, 2] * 2


def test_a_last_batch_of_one_joins_the_batch_before_it():
    from simsample.plugins.samplers._gcl.train import _batches

    for n, size in ((4, 3), (10, 3), (7, 2), (5, 64), (1, 4)):
        got = _batches(np.arange(n), size)
        assert np.array_equal(np.concatenate(got), np.arange(n))  # every launch once, in order
        assert all(len(b) >= 2 for b in got) or n < 2


def test_plan_on_hetero_traces_is_applied(tmp_path):
    hetero = shared_path("simulators", "accelsim", "hetero")
    plan = tmp_path / "gcl.json"
    args = [
        "plan",
        str(hetero),
        "--sampler",
        "gcl",
        "--param",
        "epochs=1",
        "--param",
        "warps=2",
        "--param",
        f"cache={tmp_path / 'cache'}",
        "-o",
        str(plan),
    ]
    assert cli_run(args) == 0
    doc = json.loads(plan.read_text())
    assert doc["sampler"]["name"] == "gcl" and doc["prediction"]["gcl"]["graphs"]["launches"] == 56
    k = doc["prediction"]["gcl"]["k"]
    assert len(doc["clusters"]) == k and sum(c["size"] for c in doc["clusters"]) == 56
    assert sorted(s["weight"] for s in doc["samples"]) == sorted(float(c["size"]) for c in doc["clusters"])
    for c in doc["clusters"]:  # the first launch of each cluster stands for it
        assert c["representatives"][0] == min(c["representatives"])
    out = tmp_path / "sampled"
    assert (
        cli_run(
            [
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(plan),
                "--traces",
                str(hetero),
                "--out",
                str(out),
                "--warmup",
                "none",
            ]
        )
        == 0
    )
    assert len([ln for ln in (out / "kernelslist.g").read_text().splitlines() if ln.startswith("kernel")]) == k
    assert any((tmp_path / "cache").glob("*.npz"))


def test_a_profile_is_refused_with_what_to_plan_on(tmp_path, capsys):
    profile = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"
    assert cli_run(["plan", str(profile), "--sampler", "gcl", "-o", str(tmp_path / "p.json")]) == EXIT_USER
    err = capsys.readouterr().err
    assert "Accel-Sim trace folder" in err and err.count("\n") == 1
    assert not (tmp_path / "p.json").exists()


HIDE = """
import importlib.abc, sys
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('torch', 'torch_geometric'):
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, Hide())
from simsample.cli import run
sys.exit(run(sys.argv[1:]))
"""


def test_without_the_extra_gcl_is_listed_with_a_note_and_refuses_to_plan(tmp_path):
    hetero = shared_path("simulators", "accelsim", "hetero")
    listing = subprocess.run(
        [sys.executable, "-c", HIDE, "samplers", "--json"], capture_output=True, text=True, timeout=120
    )
    assert listing.returncode == 0, listing.stderr
    (gcl,) = [s for s in json.loads(listing.stdout)["samplers"] if s["name"] == "gcl"]
    assert "pip install 'simsample[gcl]'" in gcl["unavailable"]
    others = [s for s in json.loads(listing.stdout)["samplers"] if s["name"] != "gcl"]
    assert all(s["unavailable"] is None for s in others)
    plan = subprocess.run(
        [sys.executable, "-c", HIDE, "plan", str(hetero), "--sampler", "gcl", "-o", str(tmp_path / "p.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert plan.returncode == EXIT_USER
    assert "pip install 'simsample[gcl]'" in plan.stderr and "Traceback" not in plan.stderr
    profile = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"
    root = subprocess.run(
        [
            sys.executable,
            "-c",
            HIDE,
            "plan",
            str(profile),
            "--sampler",
            "random",
            "--param",
            "count=3",
            "-o",
            str(tmp_path / "r.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert root.returncode == 0, root.stderr  # the rest works without it
