#!/usr/bin/env bash
# The replay benchmark: every searcher on the five shared benchmark_hub spaces, REPEATS seeded
# runs each at a budget of 400 evaluations, through `ktune replay`. Writes one JSON per space
# to OUT (default benchmarks/results/replay), then the table (markdown + JSON) and one PNG
# per space with benchmarks/plot_replay.py.
#   usage: benchmarks/replay_datasets.sh [KTUNE_BINARY] [OUT]
#   env:   REPEATS (100), BUDGET (400), SEARCHERS (random,genetic,annealing,bayesian),
#          DATASETS (directory of the caches), BAYESIAN_REPEATS (defaults to REPEATS)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ktune="${1:-$here/../build/ktune}"
out="${2:-$here/results/replay}"
datasets="${DATASETS:-$here/../../shared/datasets/benchmark_hub}"
repeats="${REPEATS:-100}"
budget="${BUDGET:-400}"
searchers="${SEARCHERS:-random,genetic,annealing,bayesian}"
bayes_repeats="${BAYESIAN_REPEATS:-$repeats}"
mkdir -p "$out"
for name in convolution_milo_A4000 convolution_milo_A6000 convolution_milo_W7800 \
            dedispersion_milo_A6000 dedispersion_milo_MI250X; do
  for s in ${searchers//,/ }; do
    r="$repeats"; [[ "$s" == bayesian ]] && r="$bayes_repeats"
    nice -n 10 "$ktune" replay --data "$datasets/$name.json.gz" --searcher "$s" \
      --budget "$budget" --repeats "$r" --seed 1 --json "$out/$name.$s.json" > "$out/$name.$s.txt"
  done
done
/usr/bin/python3 "$here/plot_replay.py" "$out"
