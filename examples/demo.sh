#!/usr/bin/env bash
# The tutorial's steps (docs/tutorial.md) on the bundled example data, with evaluation sweeps of
# three samplers for the HTML report; writes into demo-out/ (see README "Quick start").
set -euo pipefail
cd "$(dirname "$0")/.."
out=demo-out
rm -rf "$out"
mkdir -p "$out"
profile=examples/profile/train_step.pt.trace.json.gz
traces=examples/traces
recorded=examples/simulator/accelsim

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

echo "== 1-2. A profile of a real run (here: a synthetic PyTorch-profiler trace): a plan, and how good it is =="
step simsample profile info "$profile" --top 3
step simsample plan "$profile" -o "$out/plan.json"
step simsample evaluate "$profile" --repeat 5
step simsample plan "$profile" --steps 10-12 --exclude softmax -o "$out/window-plan.json"
step simsample evaluate "$profile" --steps 10-12 --exclude softmax --repeat 5

echo
echo "== 3-4. Simulator traces: features, a plan, the sampled trace folder, and the estimate =="
step simsample profile features --sim accelsim "$traces" -o "$out/features.parquet"
step simsample plan "$out/features.parquet" -o "$out/trace-plan.json"
step simsample apply --sim accelsim --plan "$out/trace-plan.json" --traces "$traces" --out "$out/sampled" --warmup-mode functional
echo "(the simulator's run of $out/sampled/kernelslist.g is recorded in $recorded/sampled.out.gz)"
step simsample estimate --sim accelsim --plan "$out/trace-plan.json" "$recorded/sampled.out.gz"
step simsample evaluate "$out/features.parquet" --repeat 5 --truth "$recorded/full.out.gz" --sim accelsim

echo
echo "== 5. The report: the plan with three samplers' evaluation sweeps =="
for s in random:rate=0.005,0.01,0.05 margin:eps=0.03,0.05,0.1,0.25 root:eps=0.03,0.05,0.1,0.25; do
  simsample evaluate "$profile" --sampler "${s%%:*}" --repeat 5 --sweep "${s#*:}" --json > "$out/eval-${s%%:*}.json"
done
step simsample report "$out/plan.json" --profile "$profile" --evaluate "$out/eval-random.json" --evaluate "$out/eval-margin.json" \
  --evaluate "$out/eval-root.json" -o "$out/report.html"
cat <<MSG

Open $out/report.html in a browser. With Accel-Sim built with simsample's patches, run
  accel-sim.out -trace $out/sampled/kernelslist.g -config gpgpusim.config -config trace.config -functional_warmup 1 > $out/sampled.out
  simsample estimate --sim accelsim --plan $out/trace-plan.json $out/sampled.out
MSG
