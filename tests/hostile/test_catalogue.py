"""The hostile-user catalogue: every command, fed what a careless or hostile user types.

One line per case: the command line, the exit code it must end with, and a phrase its message
must contain. For every case the inputs named on the command line are hashed before and after
(inputs are never modified), the case's own folder and the prepared inputs' folder must hold no
stray file afterwards (only the outputs of a successful run), no temporary may be left in the
temporary folder, and no run may end in a traceback or an internal error (exit 2).

The cases run in-process (:func:`simsample.cli.run`), which is what the console script calls, so
the catalogue is fast enough for the default suite; the few that need a real process (Ctrl-C,
the console script's exit code) run as subprocesses. Inputs come from ``../shared/data``: real
profiles and simulator outputs, and hostile variants derived from them in a temporary folder at
the start (a grid of 1e26, a duration of 1e308, a truncated archive, a plan listing every sample
twice, ...). Nothing derived is kept.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import lzma
import os
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import SHARED_DATA

pytestmark = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is not available")

D = SHARED_DATA
NV = "profiles/nvprof/magus/devid_cudasdk80/traces"
KP = "profiles/nvprof/gpuperfpredict-k40c"
HTA = "profiles/kineto/hta"
ACC = "simulators/accelsim"


@dataclass(frozen=True)
class Case:
    id: str
    cmd: str  # {D}: ../shared/data, {W}: prepared inputs, {O}: the case's own (output) folder
    code: int
    phrase: str
    outputs: tuple[str, ...] = ()  # files a successful run leaves in {O}


def C(id: str, cmd: str, code: int, phrase: str, *outputs: str) -> Case:
    return Case(id, cmd, code, phrase, tuple(outputs))


# --- the inputs users really have --------------------------------------------------------------
NVPROF_FILES = [
    "vectorAdd",
    "matrixMul",
    "scan",
    "reduction",
    "transpose",
    "BlackScholes",
    "dct8x8",
    "mergeSort",
    "SobolQRNG",
    "FDTD3d",
]
KP_FILES = [
    "backprop-10240-run1.csv.xz",
    "hotspot-1024_1024-run1.csv.xz",
    "lavaMD-10-run1.csv.xz",
    "lud-1024-run1.csv.xz",
]
KINETO_FILES = [
    "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    "hta/df_index_resolver/df_index_resolver.json.gz",
    "hta/nccl_parser_config/nccl_data.json.gz",
    "hta/negative_queue_length_values_check/rank0.json.gz",
    "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "hta/trace_diff/control/control.json.gz",
    "hta/trace_diff/test/test.json.gz",
    "hta/trace_filter/sampled_rank-0.json.gz",
    "hta/trace_filter/sampled_rank-1.json.gz",
    "kineto-resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "kineto-resnet50/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz",
]

CASES: list[Case] = []
# profile info on every kind of real input: all read, all say what they hold
for f in NVPROF_FILES:
    CASES.append(C(f"info-nvprof-{f}", f"profile info {{D}}/{NV}/traces_cudasdk_{f}.csv", 0, "launches"))
for f in KP_FILES:
    CASES.append(C(f"info-k40c-{f}", f"profile info {{D}}/{KP}/{f}", 0, "launches"))
for f in KINETO_FILES:
    CASES.append(
        C(f"info-kineto-{Path(f).name[:28]}", f"profile info --json {{D}}/profiles/kineto/{f}", 0, '"launches"')
    )
CASES += [
    C(
        "info-nsys-sqlite-xz",
        "profile info {D}/profiles/nsys-sqlite/pipit-cloverleaf/perlmutter-cloverleaf-cuda.sqlite.xz",
        0,
        "launches",
    ),
    C("info-ncu", "profile info {D}/profiles/ncu/microgpusim/nsight_vectoradd_100_32_metrics_all.csv", 0, "launches"),
    C(
        "info-nvprof-new-layout",
        "profile info {D}/profiles/ncu/microgpusim/nvprof_vectoradd_100_32_commands.txt",
        0,
        "launches",
    ),
    C(
        "info-nvprof-metrics-summary",
        "profile info {D}/profiles/nvprof/magus/devid_cudasdk80/metrics/metrics_cudasdk_batchCUBLAS.csv",
        1,
        "--print-gpu-trace",
    ),
    C("info-accelsim-tiny", "profile info {D}/" + ACC + "/tinytrace", 0, "launches"),
    C("info-accelsim-tiny3", "profile info {D}/" + ACC + "/tinytrace3", 0, "launches"),
    C("info-accelsim-hetero", "profile info {D}/" + ACC + "/hetero", 0, "launches"),
    C(
        "info-accelsim-microgpusim",
        "profile info {D}/" + ACC + "/microgpusim/test-apps/vectoradd/traces/vectoradd-100-32-trace",
        0,
        "launches",
    ),
    C("info-macsim", "profile info {D}/simulators/macsim/sst-unit-test/traces/nvbit/vectormultadd/4096", 0, "launches"),
    C("info-hyfiss", "profile info {D}/simulators/hyfiss/synthetic_app", 0, "launches"),
    C(
        "info-join",
        "profile info {D}/profiles/ncu/microgpusim/nvprof_vectoradd_100_32_commands.txt --join "
        "{D}/profiles/ncu/microgpusim/nsight_vectoradd_100_32_metrics_all.csv",
        0,
        "launches",
    ),
    # folders and archives of per-rank Kineto traces read every rank
    C("info-kineto-rank-folder", f"profile info --json {{D}}/{HTA}/trace_filter", 0, '"ranks"'),
    C("info-kineto-rank-folder-rank1", f"profile info --rank 1 {{D}}/{HTA}/trace_filter", 0, "launches"),
    C("info-kineto-rank-folder-norank", f"profile info --rank 7 {{D}}/{HTA}/trace_filter", 1, "no such rank"),
    C("info-kineto-tar", "profile info --json {W}/ranks.tar.gz", 0, "ranks.tar.gz:sampled_rank-1.json.gz"),
    C("plan-kineto-tar", "plan {W}/ranks.tar.gz --sampler stem -o {O}/p.json", 0, "launches", "p.json"),
    C("plan-kineto-folder", f"plan {{D}}/{HTA}/trace_filter --sampler random -o {{O}}/p.json", 0, "launches", "p.json"),
    C("info-kineto-tar-damaged", "profile info {W}/ranks-cut.tar.gz --format kineto", 1, "ranks-cut.tar.gz"),
    C("info-kineto-empty-folder", "profile info {W}/emptydir --format kineto", 1, "no Kineto trace files"),
    C("info-tar-of-junk", "profile info {W}/junk.tar.gz", 1, "no Kineto trace in this archive"),
    # a generic CSV with its own columns
    C("csv-ok", "profile info --format csv --columns name=Name,duration_ns=Duration {W}/artifact.csv", 0, "launches"),
    C(
        "csv-us",
        "plan --format csv --columns name=Name,duration_us=Time,grid_x=Grid {W}/artifact.csv --sampler stem -o "
        "{O}/p.json",
        0,
        "launches",
        "p.json",
    ),
    C(
        "csv-missing-column",
        "profile info --format csv --columns name=Kernel,duration_ns=Duration {W}/artifact.csv",
        1,
        "no column 'Kernel'",
    ),
    C("csv-no-columns", "profile info --format csv {W}/artifact.csv", 1, "needs --columns"),
    C(
        "csv-bad-key",
        "profile info --format csv --columns nam=Name,duration_ns=Duration {W}/artifact.csv",
        1,
        "unknown key 'nam'",
    ),
    C(
        "csv-no-name",
        "profile info --format csv --columns duration_ns=Duration {W}/artifact.csv",
        1,
        "name=COLUMN is required",
    ),
    C("csv-no-duration", "profile info --format csv --columns name=Name {W}/artifact.csv", 1, "duration"),
    C(
        "csv-twice",
        "profile info --format csv --columns name=Name,name=Grid,duration_ns=Duration {W}/artifact.csv",
        1,
        "given twice",
    ),
    C("csv-no-equals", "profile info --format csv --columns name {W}/artifact.csv", 1, "KEY=COLUMN"),
    C(
        "csv-columns-without-format",
        "profile info --columns name=Name,duration_ns=Duration {D}/" + NV + "/traces_cudasdk_scan.csv",
        1,
        "--format csv only",
    ),
    C(
        "csv-text-duration",
        "profile info --format csv --columns name=Name,duration_ns=Grid {W}/artifact-text.csv",
        1,
        "expected a number",
    ),
    C(
        "csv-inf-duration",
        "profile info --format csv --columns name=Name,duration_ns=Duration {W}/artifact-inf.csv",
        1,
        "out of range",
    ),
    C(
        "csv-huge-duration",
        "profile info --format csv --columns name=Name,duration_s=Duration {W}/artifact-big.csv",
        1,
        "out of range",
    ),
    C(
        "csv-negative-duration",
        "profile info --format csv --columns name=Name,duration_ns=Duration {W}/artifact-neg.csv",
        1,
        "negative duration",
    ),
]
# plans with every sampler that takes a plain profile
for sampler in ("random", "stem", "root", "allegro"):
    for f in ("vectorAdd", "scan", "matrixMul"):
        CASES.append(
            C(
                f"plan-{sampler}-{f}",
                f"plan {{D}}/{NV}/traces_cudasdk_{f}.csv --sampler {sampler} -o {{O}}/plan.json",
                0,
                "launches",
                "plan.json",
            )
        )
    CASES.append(
        C(
            f"plan-{sampler}-kineto",
            f"plan {{D}}/{HTA}/trace_diff/test/test.json.gz --sampler {sampler} -o {{O}}/plan.json",
            0,
            "launches",
            "plan.json",
        )
    )
    CASES.append(
        C(
            f"plan-{sampler}-k40c",
            f"plan {{D}}/{KP}/lud-1024-run1.csv.xz --sampler {sampler} -o {{O}}/plan.json",
            0,
            "launches",
            "plan.json",
        )
    )

CASES += [
    # --- inputs overwritten: every command that writes refuses an output that is an input -----
    C("plan-o-input-gz", "plan {W}/va.csv.gz --sampler random -o {W}/va.csv.gz", 1, "inputs are never modified"),
    C("plan-o-input", "plan {W}/va.csv --sampler random -o {W}/va.csv", 1, "is the input"),
    C("plan-o-input-dotted", "plan {W}/va.csv --sampler random -o {W}/sub/../va.csv", 1, "is the input"),
    C("plan-o-input-symlink", "plan {W}/va.csv --sampler random -o {W}/va-link.csv", 1, "inputs are never modified"),
    C("plan-o-input-hardlink", "plan {W}/va.csv --sampler random -o {W}/va-hard.csv", 1, "inputs are never modified"),
    C(
        "plan-o-second-input",
        f"plan {{D}}/{HTA}/trace_filter/sampled_rank-0.json.gz {{W}}/rank1.json.gz --sampler random -o "
        "{W}/rank1.json.gz",
        1,
        "is the input",
    ),
    C("plan-o-inside-folder", "plan {W}/t3 --sampler random -o {W}/t3/plan.json", 1, "lies inside the input"),
    C(
        "plan-o-inside-rank-folder",
        f"plan {{D}}/{HTA}/trace_filter --sampler random -o {{D}}/{HTA}/trace_filter/p.json",
        1,
        "lies inside the input",
    ),
    C("plan-o-join", "plan {W}/nvp-new.txt --join {W}/ncu.csv --sampler random -o {W}/ncu.csv", 1, "is the input"),
    C("plan-o-folder", "plan {W}/va.csv --sampler random -o {W}/emptydir", 1, "is a directory"),
    C("collect-o-log", "collect --sim accelsim --plan {W}/p3.json {W}/run.out -o {W}/run.out", 1, "is the input"),
    C("collect-o-plan", "collect --sim accelsim --plan {W}/p3.json {W}/run.out -o {W}/p3.json", 1, "is the input"),
    C("collect-macsim-o-log", "collect --sim macsim {W}/macsim.out -o {W}/macsim.out", 1, "is the input"),
    C(
        "features-o-trace",
        "profile features --sim accelsim {W}/t3 -o {W}/t3/kernel-1.traceg",
        1,
        "lies inside the input",
    ),
    C("features-o-list", "profile features --sim accelsim {W}/t3 -o {W}/t3/kernelslist.g", 1, "lies inside the input"),
    C("features-o-folder", "profile features --sim accelsim {W}/t3 -o {W}/t3", 1, "is a directory"),
    C(
        "features-macsim-o-inside",
        "profile features --sim macsim {W}/macsim-traces -o {W}/macsim-traces/f.parquet",
        1,
        "lies inside the input",
    ),
    C(
        "features-hyfiss-o-inside",
        "profile features --sim hyfiss {W}/hyfiss-app -o {W}/hyfiss-app/f.parquet",
        1,
        "lies inside the input",
    ),
    C(
        "run-o-config",
        "run --sim accelsim --sampled {W}/t3 --accelsim {W}/va.csv --config {W}/gpgpusim.config -o "
        "{W}/gpgpusim.config --dry-run",
        1,
        "is the input",
    ),
    C(
        "run-o-binary",
        "run --sim accelsim --sampled {W}/t3 --accelsim {W}/va.csv --config {W}/gpgpusim.config -o {W}/va.csv "
        "--dry-run",
        1,
        "is the input",
    ),
    C(
        "run-o-kernelslist",
        "run --sim accelsim --sampled {W}/t3 --accelsim {W}/va.csv --config {W}/gpgpusim.config -o "
        "{W}/t3/kernelslist.g --dry-run",
        1,
        "is the input",
    ),
    C(
        "run-dry",
        "run --sim accelsim --sampled {W}/t3 --accelsim {W}/va.csv --config {W}/gpgpusim.config -o {O}/run.out "
        "--dry-run",
        0,
        "kernelslist.g",
    ),
    C(
        "run-macsim-o-params",
        "run --sim macsim --sampled {W}/macsim-sampled --macsim {W}/va.csv -o {W}/macsim-sampled/params.in --force",
        1,
        "is the input",
    ),
    C(
        "apply-macsim-ok",
        "apply --sim macsim --plan {W}/pm.json --traces {W}/macsim-traces --params "
        "{D}/simulators/macsim/bin/params.in --out {O}/s",
        0,
        "",
        "s",
    ),
    C(
        "apply-out-inside-traces",
        "apply --sim accelsim --plan {W}/p3.json --traces {W}/t3 --out {W}/t3/sampled",
        1,
        "overlaps the input",
    ),
    C(
        "apply-out-is-traces",
        "apply --sim accelsim --plan {W}/p3.json --traces {W}/t3 --out {W}/t3 --force",
        1,
        "overlaps the input",
    ),
    C(
        "pick-sm-o-app-config",
        "hyfiss pick-sm {W}/hyfiss-app --device-config {W}/gpgpusim.config -o {W}/hyfiss-app/configs/app.config",
        1,
        "inputs are never modified",
    ),
    # an output folder that cannot be written
    C("plan-o-unwritable", "plan {W}/va.csv --sampler random -o /proc/plan.json", 1, "choose a writable output path"),
    C("plan-o-under-file", "plan {W}/va.csv --sampler random -o {W}/va.csv.gz/plan.json", 1, "is not a folder"),
    C("plan-o-unwritable-sys", "plan {W}/va.csv --sampler random -o /proc/sys/plan.json", 1, "permission denied"),
    C(
        "apply-out-unwritable",
        "apply --sim accelsim --plan {W}/p3.json --traces {W}/t3 --out /proc/sampled",
        1,
        "choose a writable folder",
    ),
    C(
        "collect-o-unwritable",
        "collect --sim accelsim --plan {W}/p3.json {W}/run.out -o /proc/results.csv",
        1,
        "choose a writable output path",
    ),
    # --- the commands doing their job ------------------------------------------------------
    C(
        "features-ok",
        "profile features --sim accelsim {W}/t3 -o {O}/f.parquet",
        0,
        "launches",
        "f.parquet",
        "f.parquet.extras.npz",
        "f.parquet.cache",
    ),
    C(
        "features-no-cache",
        "profile features --sim accelsim {W}/t3 -o {O}/f.parquet --no-cache",
        0,
        "launches",
        "f.parquet",
        "f.parquet.extras.npz",
    ),
    C("features-damaged-xz", "profile features --sim accelsim {W}/t3-cut -o {O}/f.parquet", 1, "kernel-2.traceg.xz"),
    C(
        "features-macsim",
        "profile features --sim macsim {W}/macsim-traces -o {O}/f.parquet",
        0,
        "launches",
        "f.parquet",
    ),
    C("features-hyfiss", "profile features --sim hyfiss {W}/hyfiss-app -o {O}/f.parquet", 0, "kernels", "f.parquet"),
    C(
        "apply-ok",
        "apply --sim accelsim --plan {W}/p3.json --traces {W}/t3 --out {O}/sampled",
        0,
        "kernelslist.g",
        "sampled",
    ),
    C(
        "apply-copy",
        "apply --sim accelsim --plan {W}/p3.json --traces {W}/t3 --out {O}/sampled --copy",
        0,
        "copied",
        "sampled",
    ),
    C(
        "apply-wrong-workload",
        "apply --sim accelsim --plan {W}/va.plan.json --traces {W}/t3 --out {O}/sampled",
        1,
        "make a plan for these inputs",
    ),
    C(
        "apply-dup-samples",
        "apply --sim accelsim --plan {W}/p3-dup.json --traces {W}/t3 --out {O}/sampled",
        1,
        "samples listed twice",
    ),
    C(
        "apply-nan-weight",
        "apply --sim accelsim --plan {W}/p3-nan.json --traces {W}/t3 --out {O}/sampled",
        1,
        "p3-nan.json",
        "samples/0/weight: nan is not a finite number",
    ),
    C(
        "collect-ok",
        "collect --sim accelsim --plan {W}/p3.json {W}/run.out -o {O}/results.csv",
        0,
        "kernel",
        "results.csv",
    ),
    C("collect-json", "collect --sim accelsim {W}/run.out --json", 0, "kernel_id"),
    C("collect-truncated-gz", "collect --sim accelsim {W}/run-cut.out.gz", 1, "run-cut.out.gz"),
    C("estimate-ok", "estimate --sim accelsim --plan {W}/p3.json {W}/run.out", 0, "cycles"),
    C("estimate-other-run", "estimate --sim accelsim --plan {W}/p3.json {W}/full.out", 1, "from another run"),
    C(
        "estimate-results-inf",
        "estimate --sim accelsim --plan {W}/p3.json {W}/results-inf.csv",
        1,
        "not a finite number",
    ),
    C("estimate-values-ok", "estimate --plan {W}/va.plan.json {W}/values.csv", 0, "value"),
    C("report-ok", "report {W}/va.plan.json -o {O}/report.html", 0, "report of", "report.html"),
    C("report-o-plan", "report {W}/va.plan.json -o {W}/va.plan.json", 1, "is the input"),
    C("report-o-profile", "report {W}/va.plan.json --profile {W}/va.csv -o {W}/va.csv", 1, "is the input"),
    C("report-o-folder", "report {W}/va.plan.json -o {O}", 1, "is a directory"),
    C("estimate-values-inf", "estimate --plan {W}/va.plan.json {W}/values-inf.csv", 1, "out of range"),
    C(
        "estimate-values-1e400",
        "estimate --plan {W}/va.plan.json {W}/values-1e400.csv",
        1,
        "value: inf is out of range",
    ),
    C("estimate-values-nan", "estimate --plan {W}/va.plan.json {W}/values-nan.csv", 1, "not numeric"),
    C("estimate-values-other-run", "estimate --plan {W}/va.plan.json {W}/values-foreign.csv", 1, "from another run"),
    C("estimate-values-missing", "estimate --plan {W}/va.plan.json {W}/values-missing.csv", 1, "no value"),
    C("estimate-confidence", "estimate --plan {W}/va.plan.json {W}/values.csv --confidence 2", 1, "confidence"),
    C(
        "estimate-macsim-wrong-plan",
        "estimate --sim macsim --plan {W}/va.plan.json {W}/macsim.out",
        1,
        "cannot estimate",
    ),
    C("collect-macsim", "collect --sim macsim {W}/macsim.out", 0, "MacSim"),
    C("pkp-replay-truncated", "pkp replay --total-ctas 10 --wave-size 5 {W}/vis-cut.log.gz", 1, "truncated or corrupt"),
    C("pkp-replay-ok", "pkp replay --stdout {W}/vis-stdout.out.gz {W}/vis.log.gz", 0, ""),
    # --- bad options -------------------------------------------------------------------------
    C("seed-negative", "plan {W}/va.csv --sampler random --seed -1 -o {O}/p.json", 1, "--seed"),
    C("seed-huge", "plan {W}/va.csv --sampler random --seed 99999999999999999999 -o {O}/p.json", 1, "--seed"),
    C("top-negative", "profile info {W}/va.csv --top -1", 1, "--top"),
    C("top-zero", "profile info {W}/va.csv --top 0", 0, "launches"),
    C("unknown-sampler", "plan {W}/va.csv --sampler nope -o {O}/p.json", 1, "nope"),
    C("unknown-format", "profile info {W}/va.csv --format nope", 1, "nope"),
    C("param-no-equals", "plan {W}/va.csv --sampler stem --param eps -o {O}/p.json", 1, "NAME=VALUE"),
    C("param-unknown", "plan {W}/va.csv --sampler stem --param nope=1 -o {O}/p.json", 1, "nope"),
    C("param-bad-value", "plan {W}/va.csv --sampler stem --param eps=abc -o {O}/p.json", 1, "eps"),
    C("param-negative", "plan {W}/va.csv --sampler stem --param eps=-1 -o {O}/p.json", 1, "eps"),
    C("photon-zero-warps", "plan {W}/f3.parquet --sampler photon --param gpu_warps=0 -o {O}/p.json", 1, "gpu_warps"),
    C("rank-on-nvprof", "profile info {W}/va.csv --rank 3", 0, "launches"),
    C("no-sim", "apply --plan {W}/p3.json --traces {W}/t3 --out {O}/s", 1, "--sim"),
    C("unknown-sim", "apply --sim nope --plan {W}/p3.json --traces {W}/t3 --out {O}/s", 1, "nope"),
    C("no-args", "plan", 1, "Missing"),
    C("unknown-command", "frobnicate", 1, "frobnicate"),
    C("help", "plan --help", 0, "Usage"),
    C("version", "--version", 0, "simsample"),
    C("samplers", "samplers --json", 0, "stem"),
    C("plugins", "plugins --json", 0, "kineto"),
    C("evaluate-ok", f"evaluate {{D}}/{NV}/traces_cudasdk_scan.csv --sampler random --repeat 2", 0, ""),
    C("evaluate-bad-repeat", f"evaluate {{D}}/{NV}/traces_cudasdk_scan.csv --sampler random --repeat 0", 1, "--repeat"),
    # --- hostile files -----------------------------------------------------------------------
    C("missing-file", "profile info {W}/nope.csv", 1, "no such file"),
    C("symlink-loop", "profile info {W}/loop-a", 1, "symbolic link loop"),
    C("broken-symlink", "profile info {W}/dangling", 1, "broken symbolic link"),
    C("empty-file", "profile info {W}/empty.csv", 1, "empty"),
    C("binary-junk", "profile info {W}/junk.bin", 1, "unrecognised"),
    C("binary-junk-as-kineto", "profile info {W}/junk.bin --format kineto", 1, "junk.bin"),
    C("folder-of-junk", "profile info {W}/emptydir", 1, "is a directory"),
    C("deep-json", "profile info {W}/deep.json", 1, "deep.json"),
    C("deep-json-kineto", "profile info {W}/deep.json --format kineto", 1, "nested too deeply"),
    C("deep-json-kineto-gz", "profile info {W}/deep-trace.json.gz", 1, "nested too deeply"),
    C("deep-json-plan", "estimate --plan {W}/deep.json {W}/values.csv", 1, "nested too deeply"),
    C(
        "deep-json-explicit",
        "plan {W}/va.csv --sampler explicit --param file={W}/deep.json -o {O}/p.json",
        1,
        "nested too deeply",
    ),
    C("truncated-gz", "profile info {W}/cut.json.gz", 1, "cut.json.gz"),
    C("truncated-xz", "profile info {W}/cut.csv.xz", 1, "cut.csv.xz"),
    C("truncated-json", "profile info {W}/cut.json", 1, "truncated"),
    C(
        "nvprof-grid-1e26",
        "plan {W}/grid-1e26.csv --sampler random -o {O}/p.json",
        1,
        "column 'Grid X': value 1e+26 is out of range",
    ),
    C(
        "nvprof-duration-1e308",
        "plan {W}/dur-1e308.csv --sampler random -o {O}/p.json",
        1,
        "column 'Duration': value 1e+308 is out of range",
    ),
    C(
        "nvprof-duration-1e400",
        "plan {W}/dur-1e400.csv --sampler random -o {O}/p.json",
        1,
        "column 'Duration': value inf",
    ),
    C("nvprof-start-1e17", "profile info {W}/start-1e17.csv", 1, "column 'Start'"),
    C("nvprof-block-negative", "profile info {W}/block-neg.csv", 1, "Block X"),
    C("nvprof-grid-text", "profile info {W}/grid-text.csv", 1, "expected a number"),
    C("nvprof-grid-fraction", "profile info {W}/grid-frac.csv", 1, "whole number"),
    C("nvprof-missing-column", "profile info {W}/no-grid.csv", 1, "lacks column(s) Grid X"),
    C("nvprof-missing-duration", "profile info {W}/no-duration.csv", 1, "Duration"),
    C("nvprof-bad-unit", "profile info {W}/bad-unit.csv", 1, "unknown unit"),
    C("nvprof-no-units-row", "profile info {W}/no-units.csv", 1, "units row"),
    C("nvprof-short-row", "profile info {W}/short-row.csv", 1, "short-row.csv"),
    C("kineto-no-dur", "profile info {W}/k-nodur.json", 1, "lacks the field 'dur'"),
    C("kineto-text-dur", "profile info {W}/k-textdur.json", 1, "field 'dur'"),
    C("kineto-huge-ts", "profile info {W}/k-hugets.json", 1, "field 'ts'"),
    C("kineto-inf-grid", "profile info {W}/k-badgrid.json", 1, "args.grid"),
    C("kineto-no-grid", "profile info {W}/k-nogrid.json", 1, "args.grid"),
    C("nsys-no-stringids", "profile info {W}/nostrings.sqlite", 1, "StringIds"),
    C("nsys-not-sqlite", "profile info {W}/va.csv --format nsys_sqlite", 1, "va.csv"),
    C("plan-nan-weight", "estimate --plan {W}/va-nan.json {W}/values.csv", 1, "va-nan.json"),
    C("plan-dup-samples", "estimate --plan {W}/va-dup.json {W}/values.csv", 1, "samples listed twice"),
    C(
        "plan-huge-id",
        "estimate --plan {W}/va-huge.json {W}/values.csv",
        1,
        "greater than the maximum of 9223372036854775807",
    ),  # the schema bounds ids to int64
    C("plan-not-json", "estimate --plan {W}/va.csv {W}/values.csv", 1, "not valid JSON"),
    C("plan-empty", "estimate --plan {W}/empty.csv {W}/values.csv", 1, "empty"),
    C("plan-is-folder", "estimate --plan {W}/emptydir {W}/values.csv", 1, "is a directory"),
    C("values-not-csv", "estimate --plan {W}/va.plan.json {W}/junk.bin", 1, "junk.bin"),
    C("results-table-empty", "estimate --sim accelsim --plan {W}/p3.json {W}/empty.csv", 1, "empty"),
    C("collect-not-a-log", "collect --sim accelsim {W}/va.csv", 1, "va.csv"),
    C("collect-missing-log", "collect --sim accelsim {W}/nope.out", 1, "nope.out"),
    C("apply-missing-traces", "apply --sim accelsim --plan {W}/p3.json --traces {W}/nope --out {O}/s", 1, "nope"),
    C("apply-plan-folder", "apply --sim accelsim --plan {W}/t3 --traces {W}/t3 --out {O}/s", 1, "is a directory"),
    C("join-folder", "profile info {W}/nvp-new.txt --join {W}/emptydir", 1, "is a directory"),
    C("join-missing", "profile info {W}/nvp-new.txt --join {W}/nope.csv", 1, "nope.csv"),
]


# --- prepared inputs ---------------------------------------------------------------------------
def _nvprof_variant(src: str, out: Path, old: str, new: str) -> None:
    text = src.replace(old, new, 1)
    assert text != src, f"variant {out.name}: {old!r} not found"
    out.write_text(text)


def _kineto(path: Path, kernel: dict) -> None:
    ev = {
        "ph": "X",
        "cat": "kernel",
        "name": "k",
        "pid": 0,
        "tid": 7,
        "ts": 10.5,
        "dur": 2.0,
        "args": {"grid": [1, 1, 1], "block": [32, 1, 1], "stream": 7, "correlation": 1},
    }
    ev.update(kernel)
    path.write_text(json.dumps({"traceEvents": [ev], "schemaVersion": 1}))


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile variants and the plans the cases need, derived from ../shared/data."""
    from simsample.cli import run

    w = tmp_path_factory.mktemp("catalogue-inputs")
    nv = (D / NV / "traces_cudasdk_vectorAdd.csv").read_text()
    (w / "va.csv").write_text(nv)
    (w / "va.csv.gz").write_bytes(gzip.compress(nv.encode()))
    os.symlink(w / "va.csv", w / "va-link.csv")
    os.link(w / "va.csv", w / "va-hard.csv")
    (w / "sub").mkdir()
    (w / "emptydir").mkdir()
    (w / "empty.csv").write_bytes(b"")
    (w / "junk.bin").write_bytes(bytes(range(256)) * 64)
    os.symlink(w / "loop-b", w / "loop-a")
    os.symlink(w / "loop-a", w / "loop-b")
    os.symlink(w / "gone", w / "dangling")
    kernel_row = "613.055684,2.208000,196,1,1,256,1,1,"
    for name, new in {
        "grid-1e26": "613.055684,2.208000,1e26,1,1,256,1,1,",
        "dur-1e308": "613.055684,1e308,196,1,1,256,1,1,",
        "dur-1e400": "613.055684,1e400,196,1,1,256,1,1,",
        "start-1e17": "1e17,2.208000,196,1,1,256,1,1,",
        "block-neg": "613.055684,2.208000,196,1,1,-256,1,1,",
        "grid-text": "613.055684,2.208000,many,1,1,256,1,1,",
        "grid-frac": "613.055684,2.208000,19.5,1,1,256,1,1,",
    }.items():
        _nvprof_variant(nv, w / f"{name}.csv", kernel_row, new)
    lines = nv.splitlines(keepends=True)
    hdr = next(i for i, line in enumerate(lines) if line.startswith('"Start"'))
    _nvprof_variant(nv, w / "no-grid.csv", '"Grid X",', "")
    _nvprof_variant(nv, w / "no-duration.csv", '"Start","Duration",', '"Start","Dauer",')
    _nvprof_variant(nv, w / "bad-unit.csv", lines[hdr + 1], "parsecs" + lines[hdr + 1][2:])
    (w / "no-units.csv").write_text("".join(lines[: hdr + 1] + lines[hdr + 2 :]))
    (w / "short-row.csv").write_text("".join(lines[: hdr + 2]) + "1.0,2.0,3\n" + "".join(lines[hdr + 2 :]))
    # a generic per-kernel CSV in a research artifact's own layout, made from a real trace
    import pandas as pd

    from simsample.reading import load_workload

    k = load_workload([D / NV / "traces_cudasdk_scan.csv"]).kernels
    art = pd.DataFrame(
        {
            "Name": k["name"].astype(str),
            "Grid": k["grid_x"],
            "Duration": k["duration_ns"],
            "Time": k["duration_ns"] / 1000,
        }
    )
    art.to_csv(w / "artifact.csv", index=False)
    art.assign(Grid="wide").to_csv(w / "artifact-text.csv", index=False)
    (w / "artifact-big.csv").write_text(
        (w / "artifact.csv").read_text().replace(f",{int(art['Duration'].iloc[0])},", ",1e12,", 1)
    )
    (w / "artifact-neg.csv").write_text(
        (w / "artifact.csv").read_text().replace(f",{int(art['Duration'].iloc[0])},", ",-5,", 1)
    )
    (w / "artifact-inf.csv").write_text(
        (w / "artifact.csv").read_text().replace(f",{int(art['Duration'].iloc[0])},", ",1e400,", 1)
    )
    # Kineto: rank files, an archive of them, hostile events
    shutil.copy(D / HTA / "trace_filter/sampled_rank-1.json.gz", w / "rank1.json.gz")
    with tarfile.open(w / "ranks.tar.gz", "w:gz") as tar:
        for r in (0, 1):
            tar.add(D / HTA / f"trace_filter/sampled_rank-{r}.json.gz", arcname=f"sampled_rank-{r}.json.gz")
    blob = (w / "ranks.tar.gz").read_bytes()
    (w / "ranks-cut.tar.gz").write_bytes(blob[: len(blob) // 2])
    with tarfile.open(w / "junk.tar.gz", "w:gz") as tar:
        tar.add(w / "junk.bin", arcname="junk.bin")
    deep = "[" * 200_000 + "]" * 200_000
    (w / "deep.json").write_text(deep)
    (w / "deep-trace.json.gz").write_bytes(gzip.compress(('{"traceEvents": ' + deep + "}").encode()))
    real = gzip.decompress((D / HTA / "trace_diff/test/test.json.gz").read_bytes())
    (w / "cut.json.gz").write_bytes(gzip.compress(real)[:20000])
    (w / "cut.json").write_bytes(real[: len(real) // 2])
    (w / "cut.csv.xz").write_bytes(lzma.compress(nv.encode())[:300])
    _kineto(w / "k-nodur.json", {"dur": None})
    json_nodur = json.loads((w / "k-nodur.json").read_text())
    del json_nodur["traceEvents"][0]["dur"]
    (w / "k-nodur.json").write_text(json.dumps(json_nodur))
    _kineto(w / "k-textdur.json", {"dur": "long"})
    _kineto(w / "k-hugets.json", {"ts": 1e300})
    (w / "k-badgrid.json").write_text(
        json.dumps(
            {
                "traceEvents": [
                    {
                        "ph": "X",
                        "cat": "kernel",
                        "name": "k",
                        "ts": 1,
                        "dur": 2,
                        "args": {"grid": [1, 1, 1], "block": [32, 1, 1]},
                    }
                ]
            }
        ).replace("[1, 1, 1]", "[1e999, 1, 1]")
    )
    _kineto(w / "k-nogrid.json", {"args": {"block": [32, 1, 1]}})
    # nsys: an export whose string table is gone
    sql = w / "nostrings.sqlite"
    sql.write_bytes(
        lzma.decompress((D / "profiles/nsys-sqlite/pipit-cloverleaf/perlmutter-cloverleaf-cuda.sqlite.xz").read_bytes())
    )
    with sqlite3.connect(sql) as conn:
        conn.execute("DROP TABLE StringIds")
    # Accel-Sim: a trace folder, its run, a damaged copy, a plan and its hostile variants
    shutil.copytree(D / ACC / "tinytrace3", w / "t3")
    shutil.copytree(D / ACC / "tinytrace3", w / "t3-cut")
    xz = (w / "t3-cut/kernel-2.traceg.xz").read_bytes()
    (w / "t3-cut/kernel-2.traceg.xz").write_bytes(xz[: len(xz) // 2])
    (w / "run.out").write_bytes(gzip.decompress((D / ACC / "tinytrace3/run_full.out.gz").read_bytes()))
    (w / "run-cut.out.gz").write_bytes((D / ACC / "tinytrace3/run_full.out.gz").read_bytes()[:3000])
    (w / "full.out").write_bytes(gzip.decompress((D / ACC / "hetero/full.out.gz").read_bytes()))
    (w / "gpgpusim.config").write_text("-gpgpu_n_clusters 80\n")
    vis = D / ACC / "hetero/visualizer_k10"
    shutil.copy(next(vis.glob("*.log.gz")), w / "vis.log.gz")
    shutil.copy(vis / "stdout.out.gz", w / "vis-stdout.out.gz")
    (w / "vis-cut.log.gz").write_bytes((w / "vis.log.gz").read_bytes()[:2000])
    shutil.copytree(D / "simulators/macsim/sst-unit-test/traces/nvbit/vectormultadd/4096", w / "macsim-traces")
    shutil.copy(D / "simulators/macsim/run-output-vectormultadd4096/macsim.out", w / "macsim.out")
    shutil.copytree(D / "simulators/hyfiss/synthetic_app", w / "hyfiss-app", symlinks=True)
    shutil.copy(D / "profiles/ncu/microgpusim/nvprof_vectoradd_100_32_commands.txt", w / "nvp-new.txt")
    shutil.copy(D / "profiles/ncu/microgpusim/nsight_vectoradd_100_32_metrics_all.csv", w / "ncu.csv")
    for argv in (
        ["profile", "features", "--sim", "accelsim", str(w / "t3"), "-o", str(w / "f3.parquet"), "--no-cache"],
        [
            "plan",
            str(w / "f3.parquet"),
            "--sampler",
            "random",
            "--param",
            "metric=warp_insts",
            "-o",
            str(w / "p3.json"),
        ],
        ["plan", str(D / NV / "traces_cudasdk_scan.csv"), "--sampler", "stem", "-o", str(w / "va.plan.json")],
        [
            "plan",
            str(w / "macsim-traces"),
            "--sampler",
            "random",
            "--param",
            "metric=instructions",
            "-o",
            str(w / "pm.json"),
        ],
        [
            "apply",
            "--sim",
            "macsim",
            "--plan",
            str(w / "pm.json"),
            "--traces",
            str(w / "macsim-traces"),
            "--params",
            str(D / "simulators/macsim/bin/params.in"),
            "--out",
            str(w / "macsim-sampled"),
        ],
    ):
        assert run(argv) == 0, argv

    # plans: a NaN weight, every sample listed twice, a kernel id beyond int64
    def variant(src: str, dst: str, edit) -> None:
        doc = json.loads((w / src).read_text())
        edit(doc)
        (w / dst).write_text(json.dumps(doc))

    variant("p3.json", "p3-dup.json", lambda d: d["samples"].extend(list(d["samples"])))
    variant("p3.json", "p3-nan.json", lambda d: d["samples"][0].update(weight=float("nan")))
    variant("va.plan.json", "va-dup.json", lambda d: d["samples"].extend(list(d["samples"])))
    variant("va.plan.json", "va-nan.json", lambda d: d["samples"][0].update(weight=float("nan")))
    variant("va.plan.json", "va-huge.json", lambda d: d["samples"][0].update(kernel_id=10**30))
    plan = json.loads((w / "va.plan.json").read_text())
    ids = sorted({s["kernel_id"] for s in plan["samples"]})
    launches = plan["workload"]["launches"]
    rows = "".join(f"{k},{100 + k}\n" for k in ids)
    (w / "values.csv").write_text("kernel_id,value\n" + rows)
    (w / "values-inf.csv").write_text(
        "kernel_id,value\n" + rows.replace(f"{ids[0]},{100 + ids[0]}", f"{ids[0]},inf", 1)
    )
    (w / "values-1e400.csv").write_text(
        "kernel_id,value\n" + rows.replace(f"{ids[0]},{100 + ids[0]}", f"{ids[0]},1e400", 1)
    )
    (w / "values-nan.csv").write_text("kernel_id,value\n" + rows.replace(f"{ids[0]},{100 + ids[0]}", f"{ids[0]},", 1))
    (w / "values-missing.csv").write_text("kernel_id,value\n" + "".join(rows.splitlines(keepends=True)[1:]))
    (w / "values-foreign.csv").write_text("kernel_id,value\n" + "".join(f"{k},{k}\n" for k in range(launches + 50)))
    p3 = json.loads((w / "p3.json").read_text())
    p3_ids = sorted({s["kernel_id"] for s in p3["samples"]})
    cols = "kernel_id,cycles,instructions,ipc,l1_hits,l1_accesses,l2_hits,l2_accesses,dram_reads,dram_writes,status"
    (w / "results-inf.csv").write_text(
        cols
        + "\n"
        + "".join(f"{k},{'1e400' if i == 0 else 1000},500,0.5,1,2,1,2,3,4,ok\n" for i, k in enumerate(p3_ids))
    )
    return w


def _digest(p: Path) -> str:
    """Content hash of a file, or of a folder's every file and link (by relative path)."""
    h = hashlib.sha256()
    if p.is_symlink() and not p.exists():
        return "dangling:" + os.readlink(p)
    if p.is_dir():
        for f in sorted(p.rglob("*")):
            h.update(str(f.relative_to(p)).encode())
            if f.is_symlink():
                h.update(os.readlink(f).encode())
            elif f.is_file():
                h.update(f.read_bytes())
        return h.hexdigest()
    h.update(p.read_bytes())
    return h.hexdigest()


def _inputs(argv: list[str], out_dir: Path) -> dict[Path, str]:
    found: dict[Path, str] = {}
    for a in argv:
        for piece in a.split("="):
            p = Path(piece)
            if (
                p.is_absolute()
                and (p.exists() or p.is_symlink())
                and out_dir not in p.parents
                and p != out_dir
                and not str(p).startswith("/proc")
            ):
                try:
                    found[p] = _digest(p)
                except OSError:
                    continue
    return found


def _wchar() -> int:
    """Bytes this process has written so far (files, pipes; ``wchar`` of ``/proc/self/io``)."""
    with open("/proc/self/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("wchar:"))


def _disk_size(p: Path) -> int:
    """Bytes ``p`` (a file, or a folder's files) occupies on disk."""
    try:
        if p.is_dir():
            return sum(f.stat().st_size for f in p.rglob("*") if f.is_file() and not f.is_symlink())
        return p.stat().st_size if p.is_file() else 0
    except OSError:
        return 0


def _listing(folder: Path) -> set[str]:
    return {str(f.relative_to(folder)) for f in folder.rglob("*")}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_catalogue(
    case: Case, work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from simsample.cli import run

    out = tmp_path / "out"
    out.mkdir()
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # every temporary of the run lands here
    monkeypatch.chdir(out)
    argv = shlex.split(case.cmd.format(D=D, W=work, O=out))
    before = _inputs(argv, out)
    work_before = _listing(work)
    written = _wchar()
    code = run(argv)
    written = _wchar() - written
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Traceback" not in text, text
    assert code != 2, f"internal error: {text}"
    assert ".partial" not in text and ".tmp" not in text, f"a message names a temporary: {text}"
    assert code == case.code, f"exit {code}, expected {case.code}: {text[-2000:]}"
    if case.phrase:
        assert case.phrase in text, f"{case.phrase!r} not in: {text[-2000:]}"
    if code == 1:
        errors = [line for line in captured.err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, captured.err
        assert errors[0].isprintable(), repr(errors[0][:300])
        # a refusal writes (temporaries included) no more than its inputs occupy
        size = sum(_disk_size(p) for p in before)
        assert written <= max(size, 256 * 1024), f"a refusal wrote {written} bytes for {size} bytes of input"
    after = {p: _digest(p) for p in before}
    assert after == before, f"inputs modified: {[str(p) for p in before if after[p] != before[p]]}"
    assert _listing(work) == work_before, f"stray files among the inputs: {_listing(work) ^ work_before}"
    left = {f.name for f in out.iterdir()}
    expected = set(case.outputs) if code == 0 else set()
    assert left == expected, f"left in the output folder: {sorted(left)}, expected {sorted(expected)}"
    assert not any(temp.iterdir()), f"temporaries left: {[f.name for f in temp.iterdir()]}"


def test_catalogue_is_large() -> None:
    assert len(CASES) >= 150
    assert len({c.id for c in CASES}) == len(CASES), "case ids must be unique"


# --- cases that need a real process ------------------------------------------------------------
def _console(*args: str) -> list[str]:
    return [sys.executable, "-c", "from simsample.console import main; main()", *args]


@pytest.mark.parametrize("delay", [0.3, 1.0, 2.0])
def test_ctrl_c_is_one_line_and_exit_130(delay: float, tmp_path: Path) -> None:
    """Ctrl-C at any moment (imports, plugin loading, reading) ends in one line, exit 130, and
    leaves no output or temporary behind."""
    src = D / "profiles/kineto/kineto-resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    out = tmp_path / "out"
    out.mkdir()
    p = subprocess.Popen(
        _console("plan", str(src), "--sampler", "stem", "-o", str(out / "p.json")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=out,
    )
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=60)
    text = stderr.decode()
    if p.returncode == 0:  # finished before the signal (or during teardown): a complete plan
        assert json.loads((out / "p.json").read_text())["samples"]
        return
    # A process ended by SIGINT itself (the signal came before Python installed its handler, or
    # while the interpreter was shutting down) is what a shell reports as 130 too.
    assert p.returncode in (130, -signal.SIGINT), text
    assert "Traceback" not in text
    assert [line for line in text.splitlines() if line.strip()] in (["interrupted"], [])
    assert not any(out.iterdir())
    assert not [f for f in tmp_path.iterdir() if f.name != "out"]


def test_ctrl_c_during_features_removes_the_new_cache(tmp_path: Path, work: Path) -> None:
    """An interrupted ``profile features`` leaves neither OUT nor OUT.cache/ behind."""

    def start(name: str) -> tuple[subprocess.Popen[bytes], Path]:
        out = tmp_path / f"out-{name}"
        out.mkdir()
        # each run its own footprint store, so that no run reuses what an earlier one scanned
        store = tmp_path / f"store-{name}"
        p = subprocess.Popen(
            _console("profile", "features", "--sim", "accelsim", str(D / ACC / "hetero"), "-o", str(out / "f.parquet")),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=out,
            env={**os.environ, "TMPDIR": str(tmp_path), "SIMSAMPLE_CACHE": str(store)},
        )
        return p, out

    # The Ctrl-C lands at fractions of an undisturbed run's length, measured here: fixed delays
    # arrived after the end once the scanner got faster, and during the interpreter's start-up on
    # a loaded machine.
    p, _ = start("undisturbed")
    began = time.monotonic()
    _, err = p.communicate(timeout=120)
    length = time.monotonic() - began
    assert p.returncode == 0, err.decode()
    interrupted = 0
    for fraction in (0.5, 0.65, 0.8, 0.95):
        p, out = start(f"{fraction}")
        time.sleep(fraction * length)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        finished = (out / "f.parquet").exists()
        if p.returncode == 0 or (p.returncode == -signal.SIGINT and finished):
            # done before Ctrl-C (the signal may land while the interpreter shuts down, after the
            # output was written whole): nothing was interrupted
            continue
        assert p.returncode == 130, err.decode()
        assert not any(out.iterdir()), sorted(f.name for f in out.iterdir())
        interrupted += 1
    assert interrupted, "every run finished before Ctrl-C: nothing was tested"


@pytest.mark.parametrize(
    "args, code",
    [
        (["profile", "info", "{W}/grid-1e26.csv"], 1),
        (["plan", "{W}/va.csv", "--sampler", "random", "-o", "{W}/va.csv"], 1),
        (["--version"], 0),
        (["frobnicate"], 1),
    ],
)
def test_console_exit_codes(args: list[str], code: int, work: Path) -> None:
    """The console script's exit code and one-line message, as a shell sees them."""
    p = subprocess.run(_console(*[a.format(W=work) for a in args]), capture_output=True, text=True, timeout=120)
    assert p.returncode == code, p.stderr
    assert "Traceback" not in p.stderr
    if code:
        assert len([line for line in p.stderr.splitlines() if line.startswith("error:")]) == 1, p.stderr


def test_an_error_while_an_interrupt_unwinds_ends_as_the_interrupt(capsys: pytest.CaptureFixture[str]) -> None:
    """Clean-up that trips over a library whose import the Ctrl-C cut short (``pandas`` without
    ``__version__`` under lazy_loader) is the interrupt's doing: "interrupted", exit 130, not an
    internal error; an error with no interrupt behind it is still a bug (exit 2)."""
    from simsample.cli import _bug
    from simsample.errors import Terminated

    def raised_while_handling(first: BaseException) -> BaseException:
        try:
            try:
                raise first
            finally:
                raise AttributeError("module 'pandas' has no attribute '__version__'")
        except AttributeError as exc:
            return exc

    assert _bug(raised_while_handling(KeyboardInterrupt())) == 130
    assert capsys.readouterr().err.strip() == "interrupted"
    assert _bug(raised_while_handling(Terminated(15))) == 143
    assert capsys.readouterr().err.strip() == "terminated"
    assert _bug(raised_while_handling(ValueError("x"))) == 2
    assert "internal error: AttributeError" in capsys.readouterr().err
