"""Contrastive training and embedding (``gcl-sampler.txt`` §3.3.1, §3.3.3, §3.4). Needs torch.

Two augmented views of every launch graph in a batch: each view applies one or two of node
dropping (``node_drop``, 15%: the node and its edges), edge dropping (``edge_drop``, 15%) and
Gaussian feature noise (``noise``, σ = 0.01), chosen at random. The loss is the symmetric InfoNCE
of the L2-normalised projections, ``S = Z1 Z2ᵀ / τ``, ``(CE(S) + CE(Sᵀ)) / 2`` with the diagonal as
the positives. AdamW with cosine annealing of the learning rate over all steps. Launches are split
80/20 into training and validation (``validation``); the weights of the epoch with the lowest
validation loss are kept (the last epoch's when the validation set has fewer than two launches,
where InfoNCE has no negatives). Embeddings are the encoder's 256-d readout in evaluation mode
(no dropout, no augmentation); launches with identical graphs are embedded once.

Everything random draws from generators seeded by the plan's seed, and torch runs single-process
on the CPU, so a plan is repeatable on one machine.

What bounds the cost at many launches (an epoch's time grows with the nodes it passes through the
encoder, twice per launch for the two views):

- **Early stopping** (``patience``): training ends once the validation loss has not improved for
  ``patience`` epochs; the weights of the best epoch are kept as before, and the learning rate
  follows the same cosine schedule over ``epochs``, so a run that stops after its best epoch ends
  with the very weights the full run would have kept unless a later epoch had beaten them. On the
  hetero traces the validation loss reaches its floor within the first few epochs.
- **Launches per epoch** (``epoch_launches``): an epoch trains on at most this many training
  launches, drawn afresh each epoch; fewer training launches than that are all used, in the same
  order as without the cap. Many launches then make training longer per plan only through the
  embedding pass, not per epoch.
- **Validation launches** (``validation_max``): the 20% held out, at most this many.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from simsample.plugins.samplers._gcl.graphs import KernelGraph
from simsample.plugins.samplers._gcl.model import (
    FEATURE_DIM,
    Encoder,
    GraphTensors,
    ProjectionHead,
    collate,
)


@dataclass(frozen=True)
class TrainConfig:
    """Training settings; defaults are the paper's where it gives them."""

    epochs: int = 40
    batch: int = 64
    hidden: int = 128
    out: int = 256
    proj_hidden: int = 128
    proj_out: int = 64
    bases: int = 2
    dropout: float = 0.1
    temperature: float = 0.05
    lr: float = 7e-4
    weight_decay: float = 0.01
    node_drop: float = 0.15
    edge_drop: float = 0.15
    noise: float = 0.01
    validation: float = 0.2
    patience: int = 8  # epochs without a better validation loss before training stops (0: never early)
    epoch_launches: int = 256  # training launches per epoch at most
    validation_max: int = 64  # validation launches at most


@dataclass
class TrainResult:
    """Embeddings and what training did (recorded in the plan)."""

    embeddings: np.ndarray
    train_loss: list[float] = field(default_factory=list)
    validation_loss: list[float] = field(default_factory=list)
    best_epoch: int = -1
    train_launches: int = 0
    validation_launches: int = 0
    distinct_graphs: int = 0
    epochs_run: int = 0


def vocabulary(graphs: list[KernelGraph]) -> dict[str, int]:
    """Every token of the workload's graphs, numbered in sorted order (the same for any order of files)."""
    return {t: i for i, t in enumerate(sorted({t for g in graphs for t in g.tokens}))}


def info_nce(z1: torch.Tensor, z2: torch.Tensor, temperature: float) -> torch.Tensor:
    """Symmetric InfoNCE (eq. 2–4): positives on the diagonal of the scaled cosine similarities."""
    s = F.normalize(z1, dim=1) @ F.normalize(z2, dim=1).T / temperature
    target = torch.arange(len(s))
    return 0.5 * (F.cross_entropy(s, target) + F.cross_entropy(s.T, target))


def augment(g: GraphTensors, cfg: TrainConfig, gen: torch.Generator) -> tuple[GraphTensors, bool]:
    """One view: one or two of node drop, edge drop and feature noise; returns the view and
    whether noise is to be added to its features."""
    k = 1 + int(torch.randint(0, 2, (1,), generator=gen))
    chosen = torch.randperm(3, generator=gen)[:k].tolist()
    view = copy.copy(g)
    if 0 in chosen and g.n_nodes > 1:
        keep = torch.rand(g.n_nodes, generator=gen) >= cfg.node_drop
        if not keep.any():
            keep[0] = True
        new_id = torch.full((g.n_nodes,), -1, dtype=torch.long)
        new_id[keep] = torch.arange(int(keep.sum()))
        ends = new_id[g.edge_index]
        ok = (ends >= 0).all(dim=0)
        view.kind, view.token, view.pos, view.stats, view.warp = (
            g.kind[keep],
            g.token[keep],
            g.pos[keep],
            g.stats[keep],
            g.warp[keep],
        )
        view.edge_index, view.edge_type = ends[:, ok], g.edge_type[ok]
    if 1 in chosen and view.edge_type.shape[0]:
        ok = torch.rand(view.edge_type.shape[0], generator=gen) >= cfg.edge_drop
        view.edge_index, view.edge_type = view.edge_index[:, ok], view.edge_type[ok]
    return view, 2 in chosen


def _views(graphs: list[GraphTensors], cfg: TrainConfig, gen: torch.Generator):
    views, noisy = zip(*(augment(g, cfg, gen) for g in graphs))
    batch = collate(list(views))
    noise = torch.zeros((len(batch.kind), FEATURE_DIM))
    start = 0
    for v, n in zip(views, noisy):
        if n:
            noise[start : start + v.n_nodes] = torch.randn((v.n_nodes, FEATURE_DIM), generator=gen) * cfg.noise
        start += v.n_nodes
    return batch, noise


def _batches(idx: np.ndarray, size: int) -> list[np.ndarray]:
    """Batches of at most ``size``; a last batch of one joins the previous (InfoNCE needs two)."""
    out = [idx[i : i + size] for i in range(0, len(idx), size)]
    if len(out) > 1 and len(out[-1]) < 2:
        last = out.pop()  # (popped first: ``out[-2] = ...(out.pop())`` would assign to the wrong batch)
        out[-1] = np.concatenate([out[-1], last])
    return out


def _digest(g: KernelGraph) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    for a in (g.kind, g.token, g.pos, g.stats, g.warp, g.edge_index, g.edge_type):
        h.update(np.ascontiguousarray(a).tobytes())
    h.update("\0".join(g.tokens).encode())
    return h.digest()


def train_and_embed(
    graphs: list[KernelGraph], cfg: TrainConfig, seed: int, progress: Callable[[int, int], None] | None = None
) -> TrainResult:
    """Train the encoder contrastively on the launches' graphs and embed every launch."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    vocab = vocabulary(graphs)
    tensors = [GraphTensors(g, vocab) for g in graphs]
    n = len(graphs)
    order = rng.permutation(n)
    n_val = min(int(round(cfg.validation * n)), cfg.validation_max) if n >= 5 else 0
    val, train = np.sort(order[:n_val]), np.sort(order[n_val:])
    encoder = Encoder(len(vocab), hidden=cfg.hidden, out=cfg.out, bases=cfg.bases, dropout=cfg.dropout)
    head = ProjectionHead(cfg.out, cfg.proj_hidden, cfg.proj_out, cfg.dropout)
    params = list(encoder.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    per_epoch = min(len(train), max(2, cfg.epoch_launches))
    steps_per_epoch = len(_batches(train[:per_epoch], cfg.batch)) if len(train) >= 2 else 0
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, cfg.epochs * steps_per_epoch))
    result = TrainResult(embeddings=np.zeros((n, cfg.out)), train_launches=len(train), validation_launches=len(val))
    best, best_state = float("inf"), None
    for epoch in range(cfg.epochs if steps_per_epoch else 0):
        encoder.train()
        head.train()
        total = 0.0
        for b in _batches(train[rng.permutation(len(train))][:per_epoch], cfg.batch):
            batch1, noise1 = _views([tensors[i] for i in b], cfg, gen)
            batch2, noise2 = _views([tensors[i] for i in b], cfg, gen)
            loss = info_nce(head(encoder(batch1, noise1)), head(encoder(batch2, noise2)), cfg.temperature)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(b)
        result.train_loss.append(total / per_epoch)
        if len(val) >= 2:
            encoder.eval()
            head.eval()
            with torch.no_grad():
                batch1, noise1 = _views([tensors[i] for i in val], cfg, gen)
                batch2, noise2 = _views([tensors[i] for i in val], cfg, gen)
                v = float(info_nce(head(encoder(batch1, noise1)), head(encoder(batch2, noise2)), cfg.temperature))
            result.validation_loss.append(v)
            if v < best:
                best, best_state, result.best_epoch = v, copy.deepcopy(encoder.state_dict()), epoch
        result.epochs_run = epoch + 1
        if cfg.patience > 0 and best_state is not None and epoch - result.best_epoch >= cfg.patience:
            break  # no better validation loss for `patience` epochs
        if progress is not None:
            progress(epoch + 1, cfg.epochs)
    if progress is not None and result.epochs_run < cfg.epochs:
        progress(cfg.epochs, cfg.epochs)
    if best_state is not None:
        encoder.load_state_dict(best_state)
    elif steps_per_epoch:
        result.best_epoch = cfg.epochs - 1
    result.embeddings = embed(encoder, graphs, tensors, cfg.batch)
    result.distinct_graphs = len({_digest(g) for g in graphs})
    return result


def embed(encoder: Encoder, graphs: list[KernelGraph], tensors: list[GraphTensors], batch: int) -> np.ndarray:
    """256-d readouts in evaluation mode; identical graphs are embedded once."""
    encoder.eval()
    first: dict[bytes, int] = {}
    source = np.array([first.setdefault(_digest(g), i) for i, g in enumerate(graphs)], dtype=np.int64)
    distinct = np.unique(source)
    out = np.zeros((len(graphs), encoder.out_dim))
    with torch.no_grad():
        for b in [distinct[i : i + batch] for i in range(0, len(distinct), batch)]:
            out[b] = encoder(collate([tensors[i] for i in b])).numpy()
    return out[source]
