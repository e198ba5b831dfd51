"""GCL-Sampler's network (``gcl-sampler.txt`` §3.3.1–3.3.2): node features, RGCN encoder, head.

Needs the ``gcl`` extra (``torch`` and ``torch-geometric``); nothing else in simsample imports
this module, so the rest works without them.

- Node features (64-d): an instruction node is its opcode's 64-d embedding plus a sinusoidal
  encoding of its normalised PC; a variable node its token's 32-d embedding followed by the eight
  value statistics (40-d); a pseudo node its token's 16-d embedding; all zero-padded to 64.
- Encoder: three ``RGCNConv`` layers 64 → 128 → 128 → 256 over the four relations with basis
  decomposition, each followed by LayerNorm, ReLU and dropout (no dropout after the last).
  Readout: the mean of a warp's nodes is the warp's embedding, the mean of a launch's warps the
  launch's 256-d embedding.
- Projection head (training only): 256 → 128 (ReLU, dropout) → 64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch_geometric.nn import RGCNConv

from simsample.plugins.samplers._gcl.graphs import INSTRUCTION, PSEUDO, RELATIONS, STATS, VARIABLE, KernelGraph

FEATURE_DIM = 64
VARIABLE_TOKEN_DIM = 32
PSEUDO_DIM = 16
#: PCs are normalised to [0, 1); the encoding spreads them over this many positions
PC_POSITIONS = 4096


@dataclass
class Batch:
    """Several launch graphs as one disjoint graph, with the pooling indices of the readout."""

    kind: torch.Tensor
    token: torch.Tensor
    pos: torch.Tensor
    stats: torch.Tensor
    edge_index: torch.Tensor
    edge_type: torch.Tensor
    #: the (graph, warp) segment of each node, numbered 0..S-1
    segment: torch.Tensor
    #: the graph of each segment
    segment_graph: torch.Tensor
    n_graphs: int


class GraphTensors:
    """One graph's arrays as tensors, its tokens mapped into the workload's vocabulary."""

    def __init__(self, g: KernelGraph, vocab: dict[str, int]) -> None:
        remap = np.array([vocab[t] for t in g.tokens], dtype=np.int64) if g.tokens else np.zeros(0, np.int64)
        self.kind = torch.from_numpy(g.kind.astype(np.int64))
        self.token = torch.from_numpy(remap[g.token] if len(g.token) else np.zeros(0, np.int64))
        self.pos = torch.from_numpy(g.pos.astype(np.float32))
        self.stats = torch.from_numpy(g.stats.astype(np.float32))
        self.warp = torch.from_numpy(g.warp.astype(np.int64))
        self.edge_index = torch.from_numpy(g.edge_index.astype(np.int64))
        self.edge_type = torch.from_numpy(g.edge_type.astype(np.int64))

    @property
    def n_nodes(self) -> int:
        return int(self.kind.shape[0])


def collate(graphs: list[GraphTensors]) -> Batch:
    """Concatenate graphs, offsetting edges, and number every (graph, warp) pair."""
    kinds, tokens, pos, stats, edges, etypes, segs, seg_graph = [], [], [], [], [], [], [], []
    node_off = seg_off = 0
    for gi, g in enumerate(graphs):
        kinds.append(g.kind)
        tokens.append(g.token)
        pos.append(g.pos)
        stats.append(g.stats)
        edges.append(g.edge_index + node_off)
        etypes.append(g.edge_type)
        uniq, inv = torch.unique(g.warp, return_inverse=True)
        segs.append(inv + seg_off)
        seg_graph.append(torch.full((len(uniq),), gi, dtype=torch.long))
        node_off += g.n_nodes
        seg_off += len(uniq)
    return Batch(
        kind=torch.cat(kinds),
        token=torch.cat(tokens),
        pos=torch.cat(pos),
        stats=torch.cat(stats),
        edge_index=torch.cat(edges, dim=1),
        edge_type=torch.cat(etypes),
        segment=torch.cat(segs),
        segment_graph=torch.cat(seg_graph),
        n_graphs=len(graphs),
    )


def segment_mean(x: torch.Tensor, segment: torch.Tensor, n: int) -> torch.Tensor:
    """Mean of the rows of ``x`` per segment (0 for an empty one)."""
    out = torch.zeros((n, x.shape[1]), dtype=x.dtype).index_add_(0, segment, x)
    count = torch.bincount(segment, minlength=n).clamp(min=1).to(x.dtype)
    return out / count[:, None]


class NodeFeatures(nn.Module):
    """The 64-d input features of every node from its kind, token, PC and value statistics."""

    def __init__(self, vocab_size: int) -> None:
        super().__init__()
        self.instruction = nn.Embedding(vocab_size, FEATURE_DIM)
        self.variable = nn.Embedding(vocab_size, VARIABLE_TOKEN_DIM)
        self.pseudo = nn.Embedding(vocab_size, PSEUDO_DIM)
        k = torch.arange(0, FEATURE_DIM, 2, dtype=torch.float32)
        self.register_buffer("frequencies", torch.exp(-math.log(10000.0) * k / FEATURE_DIM), persistent=False)

    def positional(self, pos: torch.Tensor) -> torch.Tensor:
        angle = (pos * PC_POSITIONS)[:, None] * self.frequencies[None, :]
        return torch.stack([angle.sin(), angle.cos()], dim=-1).reshape(len(pos), FEATURE_DIM)

    def forward(self, kind: torch.Tensor, token: torch.Tensor, pos: torch.Tensor, stats: torch.Tensor) -> torch.Tensor:
        x = torch.zeros((len(kind), FEATURE_DIM))
        m = kind == INSTRUCTION
        x[m] = self.instruction(token[m]) + self.positional(pos[m])
        m = kind == VARIABLE
        x[m, : VARIABLE_TOKEN_DIM + len(STATS)] = torch.cat([self.variable(token[m]), stats[m]], dim=1)
        m = kind == PSEUDO
        x[m, :PSEUDO_DIM] = self.pseudo(token[m])
        return x


class Encoder(nn.Module):
    """Three RGCN layers with LayerNorm, ReLU and dropout, and the warp-then-launch mean readout."""

    def __init__(
        self, vocab_size: int, *, hidden: int = 128, out: int = 256, bases: int = 2, dropout: float = 0.1
    ) -> None:
        super().__init__()
        self.features = NodeFeatures(vocab_size)
        dims = (FEATURE_DIM, hidden, hidden, out)
        self.convs = nn.ModuleList(
            RGCNConv(a, b, num_relations=len(RELATIONS), num_bases=bases) for a, b in zip(dims[:-1], dims[1:])
        )
        self.norms = nn.ModuleList(nn.LayerNorm(b) for b in dims[1:])
        self.dropout = nn.Dropout(dropout)
        self.out_dim = out

    def nodes(self, x: torch.Tensor, edge_index: torch.Tensor, edge_type: torch.Tensor) -> torch.Tensor:
        last = len(self.convs) - 1
        for i, (conv, norm) in enumerate(zip(self.convs, self.norms)):
            x = torch.relu(norm(conv(x, edge_index, edge_type)))
            if i < last:
                x = self.dropout(x)
        return x

    def readout(self, h: torch.Tensor, batch: Batch) -> torch.Tensor:
        warps = segment_mean(h, batch.segment, len(batch.segment_graph))
        return segment_mean(warps, batch.segment_graph, batch.n_graphs)

    def forward(self, batch: Batch, noise: torch.Tensor | None = None) -> torch.Tensor:
        x = self.features(batch.kind, batch.token, batch.pos, batch.stats)
        if noise is not None:
            x = x + noise
        return self.readout(self.nodes(x, batch.edge_index, batch.edge_type), batch)


class ProjectionHead(nn.Module):
    """256 → 128 (ReLU, dropout) → 64, used only by the contrastive loss."""

    def __init__(self, dim: int = 256, hidden: int = 128, out: int = 64, dropout: float = 0.1) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, out))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z)
