"""Record PyTorch profiler (Kineto) traces of a few GPU workloads, for the calibration's ``fresh`` family.

The development profiles decided every default of the samplers and their intervals; the holdout
profiles are old (nvprof, a K40c and CUDA SDK programs). This script records profiles on the GPU
at hand, of workloads that neither set holds, so that the intervals can be scored on profiles
nothing was chosen on (``benchmarks/calibration.py --profiles FOLDER``):

- ``gpt-train``: training steps of a small decoder-only transformer (bf16 autocast, AdamW,
  fused attention): one kernel at several shapes, many small element-wise launches;
- ``gpt-decode``: greedy generation with the same model, the sequence growing every step (the
  attention's cost drifts with the position, the rest stays);
- ``convnet-infer``: inference of a ResNet-style network at batch sizes that change from call to
  call (one convolution at many shapes, cuDNN choosing different kernels per shape);
- ``lstm-train``: training steps of a two-layer LSTM language model (cuDNN's recurrent kernels,
  long runs of identical launches);
- ``scientific``: a loop of FFTs, sorts, scatter-adds and small dense solves at sizes that vary
  (libraries' kernels of very different lengths side by side);
- ``vit-train``: training steps of a small vision transformer (``nn.TransformerEncoder``);
- ``encoder-dynamic``: a BERT-sized encoder serving batches of five sequence lengths;
- ``recsys``: embedding-bag lookups into eight large tables and a dense MLP, Adagrad steps;
- ``gnn``: graph convolution by gather and ``index_add`` over a random graph of 600,000 edges;
- ``cudagraph``: an MLP captured in a CUDA graph, replayed five times per iteration;
- ``compiled-train``: training steps of a ``torch.compile``d MLP (Triton kernels).

Six more, written after the first nine profiles' calibration and every change to the intervals
since (the ``fresh`` family's second set):

- ``unet-denoise``: twenty denoising steps of a small UNet, fp16 (one shape, repeated);
- ``moe-train``: mixture-of-experts layers with top-2 routing, training steps (each expert's GEMMs
  at a shape that changes from launch to launch);
- ``cg-solve``: conjugate gradients on a sparse Laplacian, the residual checked on the host;
- ``conv3d-train``: a 3-D convolutional video classifier, fp16 with a gradient scaler;
- ``mlp-serve``: an MLP serving forty requests of random batch sizes (1 to 512);
- ``jacobi-stencil``: 300 Jacobi sweeps of a small grid (tiny element-wise launches).

Each trace is ``torch.profiler``'s Chrome trace, gzipped, after warm-up iterations. Needs a CUDA
GPU and PyTorch (torchvision is not needed)::

    python benchmarks/record_torch_profiles.py OUT_FOLDER [--only gpt-train,lstm-train]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

#: Where the workloads below the first eleven run (a CPU run of them checks that they build and run).
_DEVICE = "cuda"


def _gpt(torch, vocab: int = 8192, d: int = 512, layers: int = 6, heads: int = 8, ctx: int = 512):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.out(a.transpose(1, 2).reshape(b, t, d))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    return GPT().cuda()


def _descend(opt) -> None:
    """After a backward pass: the optimiser's step, and the gradients dropped as training loops
    drop them (set to None, so the next backward allocates them again)."""
    opt.step()
    opt.zero_grad(set_to_none=True)


def _serve(torch, module, batches) -> Callable[[], None]:
    """Inference of ``module`` on each of ``batches`` in turn, fp16 autocast, without gradients."""

    @torch.no_grad()
    def serve() -> None:
        with torch.autocast("cuda", dtype=torch.float16):
            for x in batches:
                module(x)

    return serve


def gpt_train(torch) -> tuple[Callable[[], None], int, int]:
    model = _gpt(torch)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    idx = torch.randint(0, 8192, (8, 512), device="cuda")

    def step() -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(idx[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), idx[:, 1:].reshape(-1))
        loss.backward()
        _descend(opt)

    return step, 3, 4


def gpt_decode(torch) -> tuple[Callable[[], None], int, int]:
    model = _gpt(torch).eval()
    prompt = torch.randint(0, 8192, (4, 32), device="cuda")

    @torch.no_grad()
    def generate() -> None:
        idx = prompt
        with torch.autocast("cuda", dtype=torch.bfloat16):
            for _ in range(96):
                nxt = model(idx)[:, -1].argmax(-1, keepdim=True)
                idx = torch.cat([idx, nxt], dim=1)

    return generate, 1, 1


def convnet_infer(torch) -> tuple[Callable[[], None], int, int]:
    nn = torch.nn

    def stage(cin: int, cout: int, stride: int) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        )

    model = (
        nn.Sequential(
            nn.Conv2d(3, 64, 7, 2, 3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, 1),
            stage(64, 64, 1),
            stage(64, 128, 2),
            stage(128, 256, 2),
            stage(256, 512, 2),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(512, 1000),
        )
        .cuda()
        .eval()
        .to(memory_format=torch.channels_last)
    )
    batches = [
        torch.randn(b, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last) for b in (1, 8, 32, 4, 16)
    ]

    return _serve(torch, model, batches), 3, 4


def lstm_train(torch) -> tuple[Callable[[], None], int, int]:
    nn = torch.nn
    emb, lstm, head = (
        nn.Embedding(10000, 256).cuda(),
        nn.LSTM(256, 512, 2, batch_first=True).cuda(),
        nn.Linear(512, 10000).cuda(),
    )
    params = [*emb.parameters(), *lstm.parameters(), *head.parameters()]
    opt = torch.optim.SGD(params, lr=0.1)
    idx = torch.randint(0, 10000, (32, 65), device="cuda")

    def step() -> None:
        out, _ = lstm(emb(idx[:, :-1]))
        loss = nn.functional.cross_entropy(head(out).reshape(-1, 10000), idx[:, 1:].reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        _descend(opt)

    return step, 3, 4


def scientific(torch) -> tuple[Callable[[], None], int, int]:
    gen = torch.Generator(device="cuda").manual_seed(0)
    sizes = [1 << 12, 1 << 16, 1 << 20, 1 << 14, 1 << 18]

    def loop() -> None:
        for n in sizes:
            x = torch.randn(n, device="cuda", generator=gen)
            spec = torch.fft.rfft(x)
            y = torch.fft.irfft(spec * spec.conj(), n=n)
            s, order = torch.sort(y)
            bins = (order % 1024).long()
            hist = torch.zeros(1024, device="cuda").scatter_add_(0, bins, s.abs())
            m = 64 if n < (1 << 16) else 256
            a = torch.randn(m, m, device="cuda", generator=gen) + m * torch.eye(m, device="cuda")
            torch.linalg.solve(a, hist[:m].unsqueeze(1).expand(m, 4).contiguous())
            torch.cumsum(y, 0)

    return loop, 2, 6


def vit_train(torch) -> tuple[Callable[[], None], int, int]:
    """A small vision transformer (patch embedding, nn.TransformerEncoder), training steps."""
    nn = torch.nn
    d = 384
    embed = nn.Conv2d(3, d, 16, 16).cuda()
    layer = nn.TransformerEncoderLayer(d, 6, 4 * d, batch_first=True, norm_first=True, activation="gelu")
    encoder = nn.TransformerEncoder(layer, 6, enable_nested_tensor=False).cuda()
    head = nn.Linear(d, 1000).cuda()
    params = [*embed.parameters(), *encoder.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=1e-4)
    x, labels = torch.randn(32, 3, 224, 224, device="cuda"), torch.randint(0, 1000, (32,), device="cuda")

    def step() -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            tokens = embed(x).flatten(2).transpose(1, 2)
            loss = nn.functional.cross_entropy(head(encoder(tokens).mean(1)), labels)
        loss.backward()
        _descend(opt)

    return step, 3, 3


def encoder_dynamic(torch) -> tuple[Callable[[], None], int, int]:
    """A BERT-sized encoder serving batches of different sequence lengths (no padding to one length)."""
    nn = torch.nn
    layer = nn.TransformerEncoderLayer(768, 12, 3072, batch_first=True, activation="gelu")
    encoder = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False).cuda().eval()
    batches = [torch.randn(b, t, 768, device="cuda") for b, t in ((16, 64), (4, 384), (32, 128), (1, 512), (8, 256))]

    return _serve(torch, encoder, batches), 2, 4


def recsys(torch) -> tuple[Callable[[], None], int, int]:
    """A recommendation model: sparse embedding-bag lookups, a dense MLP, training steps."""
    nn = torch.nn
    tables = nn.ModuleList(nn.EmbeddingBag(100_000, 64, mode="sum") for _ in range(8)).cuda()
    mlp = nn.Sequential(nn.Linear(8 * 64 + 13, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 1))
    mlp = mlp.cuda()
    params = [*tables.parameters(), *mlp.parameters()]
    opt = torch.optim.Adagrad(params, lr=0.01)
    gen = torch.Generator(device="cuda").manual_seed(0)
    dense = torch.randn(2048, 13, device="cuda", generator=gen)
    ids = [torch.randint(0, 100_000, (2048 * 20,), device="cuda", generator=gen) for _ in tables]
    offsets = torch.arange(0, 2048 * 20, 20, device="cuda")
    target = torch.rand(2048, 1, device="cuda", generator=gen)

    def step() -> None:
        pooled = [t(i, offsets) for t, i in zip(tables, ids)]
        out = mlp(torch.cat([*pooled, dense], dim=1))
        nn.functional.binary_cross_entropy_with_logits(out, target).backward()
        _descend(opt)

    return step, 3, 4


def gnn(torch) -> tuple[Callable[[], None], int, int]:
    """Graph convolution by gather and index_add over a random graph, training steps."""
    nn = torch.nn
    gen = torch.Generator(device="cuda").manual_seed(0)
    nodes, edges = 50_000, 600_000
    src = torch.randint(0, nodes, (edges,), device="cuda", generator=gen)
    dst = torch.randint(0, nodes, (edges,), device="cuda", generator=gen)
    deg = torch.zeros(nodes, device="cuda").index_add_(0, dst, torch.ones(edges, device="cuda")).clamp_(min=1)
    x = torch.randn(nodes, 128, device="cuda", generator=gen)
    labels = torch.randint(0, 16, (nodes,), device="cuda", generator=gen)
    layers = nn.ModuleList([nn.Linear(128, 128), nn.Linear(128, 128), nn.Linear(128, 16)]).cuda()
    opt = torch.optim.Adam(layers.parameters(), lr=0.01)

    def step() -> None:
        h = x
        for i, lin in enumerate(layers):
            m = torch.zeros(nodes, h.shape[1], device="cuda").index_add_(0, dst, h[src]) / deg[:, None]
            h = lin(m)
            if i < len(layers) - 1:
                h = torch.relu(h)
        nn.functional.cross_entropy(h, labels).backward()
        _descend(opt)

    return step, 3, 4


def cudagraph(torch) -> tuple[Callable[[], None], int, int]:
    """An MLP captured once in a CUDA graph and replayed five times per iteration (as inference
    servers replay their decode steps): kernels whose launch call is ``cudaGraphLaunch``."""
    nn = torch.nn
    mlp = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).cuda().eval()
    x = torch.randn(64, 1024, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):
            mlp(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        mlp(x)

    def replay() -> None:
        x.copy_(torch.randn(64, 1024, device="cuda"))
        for _ in range(5):
            graph.replay()

    return replay, 1, 4


def compiled_train(torch) -> tuple[Callable[[], None], int, int]:
    """Training steps of a ``torch.compile``d MLP: Triton kernels beside the library's."""
    nn = torch.nn
    model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512), nn.LayerNorm(512)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    compiled = torch.compile(model)
    x = torch.randn(256, 512, device="cuda")

    def step() -> None:
        compiled(x).square().mean().backward()
        _descend(opt)

    return step, 3, 4


def unet_denoise(torch) -> tuple[Callable[[], None], int, int]:
    """Twenty denoising steps of a small UNet (convolutions, GroupNorm, SiLU, skip connections,
    self-attention at the bottleneck), fp16: one fixed shape, the same launches twenty times."""
    nn = torch.nn

    class Res(nn.Module):
        def __init__(self, cin: int, cout: int) -> None:
            super().__init__()
            self.n1, self.c1 = nn.GroupNorm(8, cin), nn.Conv2d(cin, cout, 3, 1, 1)
            self.n2, self.c2 = nn.GroupNorm(8, cout), nn.Conv2d(cout, cout, 3, 1, 1)
            self.t = nn.Linear(128, cout)
            self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

        def forward(self, x, t):
            h = self.c1(nn.functional.silu(self.n1(x))) + self.t(t)[:, :, None, None]
            return self.skip(x) + self.c2(nn.functional.silu(self.n2(h)))

    class UNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inp = nn.Conv2d(4, 64, 3, 1, 1)
            self.d1, self.d2, self.d3 = Res(64, 64), Res(64, 128), Res(128, 256)
            self.attn = nn.MultiheadAttention(256, 8, batch_first=True)
            self.u3, self.u2, self.u1 = Res(512, 128), Res(256, 64), Res(128, 64)
            self.out = nn.Conv2d(64, 4, 3, 1, 1)

        def forward(self, x, t):
            h1 = self.d1(self.inp(x), t)
            h2 = self.d2(nn.functional.avg_pool2d(h1, 2), t)
            h3 = self.d3(nn.functional.avg_pool2d(h2, 2), t)
            b, c, hh, ww = h3.shape
            seq = h3.flatten(2).transpose(1, 2)
            h3 = h3 + self.attn(seq, seq, seq, need_weights=False)[0].transpose(1, 2).reshape(b, c, hh, ww)
            u = self.u3(torch.cat([h3, h3], 1), t)
            u = self.u2(torch.cat([nn.functional.interpolate(u, scale_factor=2.0), h2], 1), t)
            u = self.u1(torch.cat([nn.functional.interpolate(u, scale_factor=2.0), h1], 1), t)
            return self.out(u)

    model = UNet().to(_DEVICE).eval()
    x0 = torch.randn(4, 4, 64, 64, device=_DEVICE)
    freqs = torch.exp(-torch.arange(64, device=_DEVICE) * (9.2 / 64))

    @torch.no_grad()
    def denoise() -> None:
        x = x0
        with torch.autocast(_DEVICE, dtype=torch.float16):
            for step in range(20, 0, -1):
                ang = step * 50.0 * freqs
                t = torch.cat([ang.sin(), ang.cos()]).expand(x.shape[0], 128)
                x = x - 0.05 * model(x, t).float()

    return denoise, 1, 2


def moe_train(torch) -> tuple[Callable[[], None], int, int]:
    """Training steps of a mixture-of-experts layer stack with top-2 routing: each expert's GEMMs
    take the tokens routed to it, so one kernel runs at a shape that changes from launch to launch."""
    nn = torch.nn
    d, experts, tokens = 512, 8, 4096

    class MoE(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.router = nn.Linear(d, experts)
            self.up = nn.ModuleList(nn.Linear(d, 2 * d) for _ in range(experts))
            self.down = nn.ModuleList(nn.Linear(2 * d, d) for _ in range(experts))

        def forward(self, x):
            weights, chosen = self.router(x).softmax(-1).topk(2, dim=-1)
            out = torch.zeros_like(x)
            for e in range(experts):
                rows, slot = (chosen == e).nonzero(as_tuple=True)
                if rows.numel():
                    h = self.down[e](nn.functional.gelu(self.up[e](x[rows])))
                    out = out.index_add(0, rows, (h * weights[rows, slot, None]).to(out.dtype))
            return x + out

    layers = nn.Sequential(*(MoE() for _ in range(4))).to(_DEVICE)
    opt = torch.optim.AdamW(layers.parameters(), lr=1e-4)
    gen = torch.Generator(device=_DEVICE).manual_seed(0)
    batches = [torch.randn(tokens, d, device=_DEVICE, generator=gen) * (1 + i) for i in range(4)]
    state = {"i": 0}

    def step() -> None:
        x = batches[state["i"] % len(batches)]
        state["i"] += 1
        with torch.autocast(_DEVICE, dtype=torch.bfloat16):
            loss = layers(x).float().square().mean()
        loss.backward()
        _descend(opt)

    return step, 2, 4


def cg_solve(torch) -> tuple[Callable[[], None], int, int]:
    """Conjugate gradients on a sparse 2-D Laplacian (CSR matrix-vector products, dot products,
    vector updates), the residual checked on the host every ten iterations: short kernels that
    the host's synchronisations space out."""
    n = 512
    idx = torch.arange(n * n, device=_DEVICE)
    i, j = idx // n, idx % n
    rows, cols, vals = [idx], [idx], [torch.full((n * n,), 4.0, device=_DEVICE)]
    for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        ok = (i + di >= 0) & (i + di < n) & (j + dj >= 0) & (j + dj < n)
        rows.append(idx[ok])
        cols.append((i[ok] + di) * n + j[ok] + dj)
        vals.append(torch.full((int(ok.sum()),), -1.0, device=_DEVICE))
    a = torch.sparse_coo_tensor(torch.stack([torch.cat(rows), torch.cat(cols)]), torch.cat(vals), (n * n, n * n))
    a = a.coalesce().to_sparse_csr()
    b = torch.sin(idx.float() / 97.0)

    def solve() -> None:
        x = torch.zeros_like(b)
        r = b - a @ x
        p = r.clone()
        rr = torch.dot(r, r)
        for it in range(120):
            ap = a @ p
            alpha = rr / torch.dot(p, ap)
            x = x + alpha * p
            r = r - alpha * ap
            rr_new = torch.dot(r, r)
            if it % 10 == 9 and float(rr_new) < 1e-10:
                break
            p = r + (rr_new / rr) * p
            rr = rr_new

    return solve, 1, 3


def conv3d_train(torch) -> tuple[Callable[[], None], int, int]:
    """Training steps of a small 3-D convolutional video classifier, fp16 autocast with a gradient
    scaler: cuDNN's 3-D forward, data-gradient and weight-gradient kernels."""
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv3d(3, 32, 3, 1, 1), nn.BatchNorm3d(32), nn.ReLU(),
        nn.MaxPool3d(2),
        nn.Conv3d(32, 64, 3, 1, 1), nn.BatchNorm3d(64), nn.ReLU(),
        nn.MaxPool3d(2),
        nn.Conv3d(64, 128, 3, 1, 1), nn.BatchNorm3d(128), nn.ReLU(),
        nn.AdaptiveAvgPool3d(1), nn.Flatten(), nn.Linear(128, 50),
    ).to(_DEVICE)  # fmt: skip
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler(_DEVICE)
    x, labels = torch.randn(8, 3, 16, 64, 64, device=_DEVICE), torch.randint(0, 50, (8,), device=_DEVICE)

    def step() -> None:
        with torch.autocast(_DEVICE, dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(x), labels)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    return step, 3, 4


def mlp_serve(torch) -> tuple[Callable[[], None], int, int]:
    """An MLP serving forty requests of batch sizes drawn at random from 1 to 512: the library
    picks a different GEMM kernel for some sizes, so launches of one layer differ in kernel and shape."""
    nn = torch.nn
    model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 256))
    model = model.to(_DEVICE).eval()
    gen = torch.Generator().manual_seed(0)
    sizes = torch.randint(1, 513, (40,), generator=gen).tolist()
    batches = [torch.randn(b, 1024, device=_DEVICE) for b in sizes]

    return _serve(torch, model, batches), 2, 2


def jacobi_stencil(torch) -> tuple[Callable[[], None], int, int]:
    """Jacobi relaxation of a 256 x 256 grid, 300 sweeps of slicing and averaging: thousands of
    tiny element-wise launches whose time is mostly launch overhead."""
    grid = torch.zeros(256, 256, device=_DEVICE)
    grid[0, :] = 1.0

    def sweep() -> None:
        g = grid.clone()
        for _ in range(300):
            inner = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
            g[1:-1, 1:-1] = inner

    return sweep, 1, 1


WORKLOADS = {
    "gpt-train": gpt_train,
    "gpt-decode": gpt_decode,
    "convnet-infer": convnet_infer,
    "lstm-train": lstm_train,
    "scientific": scientific,
    "vit-train": vit_train,
    "encoder-dynamic": encoder_dynamic,
    "recsys": recsys,
    "gnn": gnn,
    "cudagraph": cudagraph,
    "compiled-train": compiled_train,
    "unet-denoise": unet_denoise,
    "moe-train": moe_train,
    "cg-solve": cg_solve,
    "conv3d-train": conv3d_train,
    "mlp-serve": mlp_serve,
    "jacobi-stencil": jacobi_stencil,
}


def named_trace(text: str, exported_as: str, name: str) -> str:
    """The exported trace with its ``traceName`` (the path it was exported to, a path of the
    recording machine) replaced by the file's own name; the rest byte for byte."""
    old, new = f'"traceName": {json.dumps(exported_as)}', f'"traceName": {json.dumps(name)}'
    return text.replace(old, new, 1)


def record(torch, name: str, out: Path, *, steps: bool = False) -> dict:
    """Warm the workload up, profile its active iterations, write ``out/NAME.pt.trace.json.gz``.

    ``steps``: with a profiler schedule of the active iterations (no wait, no warm-up), so that
    the trace holds a ``ProfilerStep#N`` range per iteration, as a training loop's does."""
    from torch.profiler import ProfilerActivity, profile, schedule

    fn, warmup, active = WORKLOADS[name](torch)
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    plan = {"schedule": schedule(wait=0, warmup=0, active=active, repeat=1)} if steps else {}
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], **plan) as prof:
        for _ in range(active):
            fn()
            torch.cuda.synchronize()
            prof.step()  # as a training loop calls it (without a schedule, no ProfilerStep#N range is recorded)
    wall = time.perf_counter() - t0
    raw = out / f"{name}.pt.trace.json"
    target = out / f"{name}.pt.trace.json.gz"
    partial = out / f"{name}.pt.trace.json.gz.part"
    try:
        prof.export_chrome_trace(str(raw))
        text = named_trace(raw.read_text(), str(raw), raw.name)
        kernels = sum(1 for e in json.loads(text)["traceEvents"] if e.get("cat") == "kernel")
        with open(partial, "wb") as fh:
            with gzip.GzipFile(raw.name, "wb", compresslevel=9, fileobj=fh, mtime=0) as dst:
                dst.write(text.encode())
        partial.replace(target)
    finally:
        raw.unlink(missing_ok=True)
        partial.unlink(missing_ok=True)
    return {
        "workload": name,
        "kernels": kernels,
        "iterations": active,
        "wall_s": round(wall, 3),
        "bytes": target.stat().st_size,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads")
    ap.add_argument("--steps", action="store_true", help="record a ProfilerStep#N range per iteration")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = sorted(set(names) - set(WORKLOADS))
    if unknown:
        ap.error(f"--only: no workload {', '.join(unknown)} (known: {', '.join(WORKLOADS)})")
    try:
        import torch
    except ImportError:
        raise SystemExit("record_torch_profiles: needs PyTorch (with CUDA) in this Python") from None
    if not torch.cuda.is_available():
        raise SystemExit("record_torch_profiles: no CUDA GPU here; run it where PyTorch sees one")
    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    failed = 0
    for name in names:
        try:
            print(json.dumps(record(torch, name, args.out, steps=args.steps)), flush=True)
        except Exception as exc:  # noqa: BLE001 - one workload's failure leaves the others' profiles
            failed += 1
            print(f"{name}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
