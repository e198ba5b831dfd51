#!/usr/bin/env bash
# The main job on the bundled example data (see README "Quick start"); writes into demo-out/.
set -euo pipefail
cd "$(dirname "$0")/.."
out=demo-out
rm -rf "$out"
mkdir -p "$out"
profile=examples/profile/train_step.pt.trace.json.gz
traces=examples/traces

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

echo "== 1. A profile of a real run (here: a synthetic PyTorch-profiler trace) =="
step simsample profile info "$profile" --top 5
step simsample plan "$profile" --seed 1 -o "$out/plan.json"
step simsample evaluate "$profile" --sampler random --param rate=0.01 --repeat 5
step simsample evaluate "$profile" --repeat 5
step simsample evaluate "$profile" --sampler root --repeat 5
for s in random:rate=0.005,0.01,0.05 margin:eps=0.03,0.05,0.1,0.25 root:eps=0.03,0.05,0.1,0.25; do simsample evaluate "$profile" --sampler "${s%%:*}" --repeat 5 --sweep "${s#*:}" --json > "$out/eval-${s%%:*}.json"; done
step simsample report "$out/plan.json" --profile "$profile" --evaluate "$out/eval-random.json" --evaluate "$out/eval-margin.json" --evaluate "$out/eval-root.json" -o "$out/report.html"

echo
echo "== 2. Simulator traces: features, a plan, and the sampled trace folder =="
step simsample profile info "$traces" --top 3
step simsample profile features --sim accelsim "$traces" -o "$out/features.parquet"
step simsample plan "$out/features.parquet" --sampler root --param metric=warp_insts -o "$out/trace-plan.json"
step simsample apply --sim accelsim --plan "$out/trace-plan.json" --traces "$traces" --out "$out/sampled"
step cat "$out/sampled/kernelslist.g"
cat <<MSG

Next: run Accel-Sim on $out/sampled/kernelslist.g, then
  simsample estimate --sim accelsim --plan $out/trace-plan.json accel-sim.log
MSG
