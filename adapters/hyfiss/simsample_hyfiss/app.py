"""A HyFiSS application folder, read the way HyFiSS reads it.

Layout (written by HyFiSS's NVBit tracing tool and its ``sass-split`` step)::

    <app>/configs/app.config     -app_kernels_id 1,2,...,N; -kernel_K_<key> <value> per kernel
    <app>/configs/instn.config   one static instruction per line: <K> <pc hex> [@P] OPCODE ...
    <app>/configs/issue.config   the real CTA schedule: -trace_issued_sm_id_<sm> <n>,<sm>,(<K>,<block>,<ts>),...
    <app>/sass_traces/kernel-K/kernel_K_block_B.sass     one dynamic warp instruction per line: <pc> <mask> <warp>
    <app>/memory_traces/kernel-K/kernel_K_block_B.mem
    <app>/outputs/               where the simulator writes (configs/../outputs)

Kernel ids are 1-based as in ``app.config``. HyFiSS skips every line containing ``#`` and reads
kernel K's entries by position (the K-th id of ``-app_kernels_id``), so ids must run 1..N without
gaps; anything else is refused here with the file and line, instead of simulating the wrong
kernel.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from simsample.sdk import FormatError, UserError, missing_message, read_text_limited

CONFIGS = "configs"
APP_CONFIG = "app.config"
INSTN_CONFIG = "instn.config"
ISSUE_CONFIG = "issue.config"
SASS = "sass_traces"
MEMORY = "memory_traces"
OUTPUTS = "outputs"

_INT_KEYS = (
    "num_registers",
    "shared_mem_bytes",
    "grid_size",
    "block_size",
    "cuda_stream_id",
    "grid_dim_x",
    "grid_dim_y",
    "grid_dim_z",
    "tb_dim_x",
    "tb_dim_y",
    "tb_dim_z",
    "sampling_point",
)
_STR_KEYS = ("kernel_name", "shmem_base_addr", "local_base_addr")
_REQUIRED = ("kernel_name", "grid_dim_x", "grid_dim_y", "grid_dim_z", "tb_dim_x", "tb_dim_y", "tb_dim_z")
_KERNEL_LINE = re.compile(r"^\s*-kernel_(\d+)_([a-z_]+?)(?:\s+(.*?))?\s*$")
_IDS_LINE = re.compile(r"^\s*-app_kernels_id\s*(.*?)\s*$")


@dataclass
class AppPaths:
    """Where the parts of an application folder are."""

    root: Path
    configs: Path

    @property
    def app_config(self) -> Path:
        return self.configs / APP_CONFIG

    @property
    def instn_config(self) -> Path:
        return self.configs / INSTN_CONFIG

    @property
    def issue_config(self) -> Path:
        return self.configs / ISSUE_CONFIG

    @property
    def sass(self) -> Path:
        return self.configs.parent / SASS

    @property
    def memory(self) -> Path:
        return self.configs.parent / MEMORY

    def sass_dir(self, k: int) -> Path:
        return self.sass / f"kernel-{k}"

    def memory_dir(self, k: int) -> Path:
        return self.memory / f"kernel-{k}"


def find_app(path: Path) -> AppPaths:
    """An application folder, its ``configs`` folder, or ``app.config`` itself."""
    path = Path(path)
    if not path.exists():
        raise UserError(missing_message(path))  # a broken link or a loop is named as such
    if path.is_file():
        if path.name != APP_CONFIG:
            raise UserError(f"{path}: expected a HyFiSS application folder or its configs/{APP_CONFIG}")
        return AppPaths(path.parent.parent, path.parent)
    if (path / CONFIGS / APP_CONFIG).is_file():
        return AppPaths(path, path / CONFIGS)
    if (path / APP_CONFIG).is_file():
        return AppPaths(path.parent, path)
    raise UserError(f"{path}: no {CONFIGS}/{APP_CONFIG}; is it a HyFiSS application folder?")


@dataclass
class AppKernel:
    """One kernel's entries in ``app.config``."""

    id: int  # 1-based
    values: dict[str, str | int] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)  # key -> line number

    @property
    def name(self) -> str:
        return str(self.values["kernel_name"])

    def get(self, key: str, default: int = 0) -> int:
        v = self.values.get(key, default)
        return int(v)

    @property
    def grid(self) -> tuple[int, int, int]:
        return (self.get("grid_dim_x"), self.get("grid_dim_y"), self.get("grid_dim_z"))

    @property
    def block(self) -> tuple[int, int, int]:
        return (self.get("tb_dim_x"), self.get("tb_dim_y"), self.get("tb_dim_z"))

    @property
    def sampling_point(self) -> int | None:
        v = self.values.get("sampling_point")
        return None if v is None else int(v)


@dataclass
class AppConfig:
    path: Path
    lines: list[str]
    kernels: list[AppKernel]  # in id order, 1..N

    def kernel(self, k: int) -> AppKernel:
        if not 1 <= k <= len(self.kernels):
            raise UserError(f"{self.path}: no kernel {k} (kernels are 1..{len(self.kernels)})")
        return self.kernels[k - 1]


def parse_app_config(path: Path) -> AppConfig:
    """Parse ``app.config``; refuse gaps, unknown ids, missing entries and bad numbers."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    lines = read_text_limited(path, errors="replace").splitlines()
    ids: list[int] | None = None
    ids_line = 0
    entries: list[tuple[int, str, str, int]] = []
    for i, raw in enumerate(lines, start=1):
        if "#" in raw or not raw.strip():
            continue
        m = _IDS_LINE.match(raw)
        if m:
            if ids is not None:
                raise FormatError(path, f"-app_kernels_id given twice (first on line {ids_line})", line=i)
            items = [s.strip() for s in m.group(1).split(",")]
            if not all(s.isdigit() for s in items):
                raise FormatError(
                    path,
                    f"-app_kernels_id must be a comma-separated list of numbers, got {m.group(1)!r} (HyFiSS counts "
                    "every comma)",
                    line=i,
                )
            ids, ids_line = [int(s) for s in items], i
            continue
        m = _KERNEL_LINE.match(raw)
        if m:
            entries.append((int(m.group(1)), m.group(2), m.group(3) or "", i))
    if ids is None:
        raise FormatError(path, "no -app_kernels_id line: not a HyFiSS app.config")
    for pos, k in enumerate(ids, start=1):
        if k != pos:
            raise FormatError(
                path,
                f"kernel ids must run 1..N without gaps (HyFiSS reads kernel K's entries by position): "
                f"position {pos} holds {k}" + (f", so kernel {pos} is missing" if k > pos else ""),
                line=ids_line,
            )
    kernels = [AppKernel(k) for k in ids]
    for k, key, value, line in entries:
        if not 1 <= k <= len(kernels):
            raise FormatError(
                path, f"-kernel_{k}_{key}: kernel {k} is not in -app_kernels_id (1..{len(kernels)})", line=line
            )
        if key not in _INT_KEYS and key not in _STR_KEYS:
            continue  # keys of newer tracers are kept verbatim and otherwise ignored
        kern = kernels[k - 1]
        if key in kern.lines:
            raise FormatError(path, f"-kernel_{k}_{key} given twice (first on line {kern.lines[key]})", line=line)
        if key in _INT_KEYS:
            try:
                kern.values[key] = int(value)
            except ValueError:
                raise FormatError(
                    path, f"-kernel_{k}_{key}: expected a whole number, got {value!r}", line=line
                ) from None
        else:
            kern.values[key] = value
        kern.lines[key] = line
    for kern in kernels:
        missing = [key for key in _REQUIRED if key not in kern.values]
        if missing:
            raise FormatError(path, f"kernel {kern.id} has no -kernel_{kern.id}_{missing[0]} line")
    return AppConfig(path, lines, kernels)


def with_sampling_points(app: AppConfig, points: dict[int, int]) -> str:
    """``app.config`` text with ``-kernel_K_sampling_point`` set for the given kernels.

    An existing line is replaced in place; otherwise one is added after the kernel's last entry.
    Every other line is kept as it was.
    """
    lines = list(app.lines)
    inserts: dict[int, list[str]] = defaultdict(list)
    for k, sm in sorted(points.items()):
        kern = app.kernel(k)
        text = f"-kernel_{k}_sampling_point {int(sm)}"
        if "sampling_point" in kern.lines:
            lines[kern.lines["sampling_point"] - 1] = text
        else:
            inserts[max(kern.lines.values())].append(text)
    out: list[str] = []
    for i, line in enumerate(lines, start=1):
        out.append(line)
        out.extend(inserts.get(i, []))
    return "\n".join(out) + "\n"


@dataclass
class Schedule:
    """``issue.config``: the SM the real scheduler gave each CTA."""

    path: Path
    sm_of: dict[tuple[int, int], int]  # (kernel, block) -> SM

    def blocks(self, k: int) -> dict[int, int]:
        """Block → SM for kernel ``k``."""
        return {b: sm for (kk, b), sm in self.sm_of.items() if kk == k}


_SM_LINE = re.compile(r"^\s*-trace_issued_sm_id_(\d+)\s+(.*?)\s*$")
_HEAD = re.compile(r"^(\d+),(\d+),")
_CTA = re.compile(r"\((\d+),(\d+),([0-9a-fA-F]+)\)")


def parse_issue_config(path: Path) -> Schedule:
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file (the CTA schedule HyFiSS needs)")
    sm_of: dict[tuple[int, int], int] = {}
    seen_sms: dict[int, int] = {}
    listed: list[int] | None = None
    count: int | None = None
    for i, raw in enumerate(read_text_limited(path, errors="replace").splitlines(), start=1):
        if "#" in raw or not raw.strip():
            continue
        s = raw.strip()
        if s.startswith("-trace_issued_sms_num"):
            try:
                count = int(s.split()[1])
            except (IndexError, ValueError):
                raise FormatError(path, "expected -trace_issued_sms_num <count>", line=i) from None
            continue
        if s.startswith("-trace_issued_sms_vector"):
            parts = s.split(None, 1)
            items = [x for x in (parts[1] if len(parts) > 1 else "").split(",") if x.strip()]
            try:
                listed = [int(x) for x in items]
            except ValueError:
                raise FormatError(path, "expected -trace_issued_sms_vector <sm>,<sm>,...", line=i) from None
            continue
        m = _SM_LINE.match(raw)
        if not m:
            continue
        sm = int(m.group(1))
        if sm in seen_sms:
            raise FormatError(path, f"SM {sm} listed twice (first on line {seen_sms[sm]})", line=i)
        seen_sms[sm] = i
        body = m.group(2)
        h = _HEAD.match(body)
        if not h:
            raise FormatError(path, "expected <count>,<sm>,(<kernel>,<block>,<time>),...", line=i)
        n, sm2 = int(h.group(1)), int(h.group(2))
        ctas = _CTA.findall(body)
        if sm2 != sm:
            raise FormatError(path, f"line of SM {sm} says SM {sm2}", line=i)
        if len(ctas) != n:
            raise FormatError(path, f"SM {sm}: says {n} CTAs but lists {len(ctas)}", line=i)
        for k, b, _ts in ctas:
            key = (int(k), int(b))
            if key in sm_of:
                raise FormatError(
                    path, f"block {key[1]} of kernel {key[0]} placed twice (SM {sm_of[key]} and SM {sm})", line=i
                )
            sm_of[key] = sm
    if listed is not None and sorted(listed) != sorted(seen_sms):
        raise FormatError(
            path, f"-trace_issued_sms_vector lists SMs {sorted(listed)} but CTA lines are for {sorted(seen_sms)}"
        )
    if count is not None and count != len(seen_sms):
        raise FormatError(path, f"-trace_issued_sms_num says {count} SMs but {len(seen_sms)} have CTA lines")
    return Schedule(path, sm_of)


@dataclass
class StaticInstructions:
    """``instn.config``: per kernel, pc → opcode (without modifiers and predicate)."""

    path: Path
    opcode: dict[int, dict[int, str]]  # kernel -> pc -> opcode

    def count(self, k: int) -> int:
        return len(self.opcode.get(k, {}))


def parse_instn_config(path: Path) -> StaticInstructions:
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file (HyFiSS's static instructions)")
    out: dict[int, dict[int, str]] = defaultdict(dict)
    for i, raw in enumerate(read_text_limited(path, errors="replace").splitlines(), start=1):
        if "#" in raw or not raw.strip():
            continue
        toks = raw.split()
        if len(toks) < 3:
            raise FormatError(path, "expected <kernel> <pc> [@P] OPCODE ...", line=i)
        try:
            k, pc = int(toks[0]), int(toks[1], 16)
        except ValueError:
            raise FormatError(path, "expected a kernel number and a hexadecimal pc first", line=i) from None
        op = toks[3] if toks[2].startswith("@") and len(toks) > 3 else toks[2]
        out[k][pc] = op.split(".", 1)[0].upper()
    return StaticInstructions(path, dict(out))
