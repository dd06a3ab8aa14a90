#!/usr/bin/env bash
# What the warm start (`ktune tune --warm-start`) buys on a GPU. For each template, a first
# shape is tuned with a large budget; then each further shape is tuned with a small budget
# twice, into two logs that both start from the first shape's trials: once with the warm start
# (the winners of the nearest shapes tuned before are measured right after the default) and
# once without (--warm-start 0), alternating which goes first. Prints and writes
# (OUTDIR/warm_start.md) the best time each found per shape and their ratio; where both runs
# ended on the same config, the ratio counts as 1.000 (the difference in time is then the noise
# between two measurements of one config, not something the warm start found).
#   usage: benchmarks/warm_start.sh KTUNE OUTDIR   (env: KTUNE_WS_FIRST=48, KTUNE_WS_BUDGET=12,
#          KTUNE_WS_GEMM / KTUNE_WS_NORM: "FIRST SHAPE..." for gemm_mma f16 NT / LayerNorm f16)
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: benchmarks/warm_start.sh KTUNE OUTDIR" >&2
  exit 2
fi
K=$1
R=$2
mkdir -p "$R"
first_budget=${KTUNE_WS_FIRST:-48}
budget=${KTUNE_WS_BUDGET:-12}

# bench NAME "PROBLEM OPTIONS" FIRST_SHAPE SHAPE...
bench() {
  local name=$1 common=$2 first=$3
  shift 3
  local base=$R/ws-$name-base.db
  rm -f "$R/ws-$name"-*
  # shellcheck disable=SC2086  # $common holds several options
  "$K" tune $common --shape "$first" --budget "$first_budget" --db "$base" --progress 0 --warm-start 0
  "$K" export --db "$base" "$R/ws-$name-base.jsonl"
  for mode in warm cold; do "$K" import --db "$R/ws-$name-$mode.db" "$R/ws-$name-base.jsonl"; done
  local i=0
  for shape in "$@"; do
    local order="warm cold"
    [ $((i % 2)) -eq 1 ] && order="cold warm"
    for mode in $order; do
      local ws=3
      [ "$mode" = cold ] && ws=0
      # shellcheck disable=SC2086
      "$K" tune $common --shape "$shape" --budget "$budget" --db "$R/ws-$name-$mode.db" \
        --progress 0 --warm-start "$ws"
    done
    i=$((i + 1))
  done
  for mode in warm cold; do "$K" best --json --db "$R/ws-$name-$mode.db" > "$R/ws-$name-$mode.json"; done
}

# The shapes (first one first; an empty list skips the template).
gemm_shapes=${KTUNE_WS_GEMM-4096x4096x4096 4096x11008x4096 4096x4096x11008 8192x4096x4096 2048x2048x2048 4096x14336x4096}
norm_shapes=${KTUNE_WS_NORM-32768x4096 8192x4096 32768x2048 16384x8192 4096x16384 65536x1024}
# shellcheck disable=SC2086  # the lists split into shapes
[ -n "$gemm_shapes" ] && bench gemm "--template gemm_mma --dtype f16 --layout NT" $gemm_shapes
# shellcheck disable=SC2086
[ -n "$norm_shapes" ] && bench layernorm "--template layernorm --dtype f16" $norm_shapes

python3 - "$R" "$budget" "$first_budget" <<'PY'
import json, math, sys
out, budget, first = sys.argv[1], sys.argv[2], sys.argv[3]
lines = [f"Warm start: best time found with a budget of {budget} trials per shape, after a first "
         f"shape tuned with {first} (ms; ratio = without / with, > 1: the warm start found faster; "
         "where both ended on the same config the ratio counts as 1.000, the timed ratio is noise)", "",
         "| template | problem | with warm start | without | ratio |", "| --- | --- | --- | --- | --- |"]
for name in ("gemm", "layernorm"):
    try:
        rows = {m: {r["problem"]: r for r in json.load(open(f"{out}/ws-{name}-{m}.json"))} for m in ("warm", "cold")}
    except FileNotFoundError:
        continue  # not measured in this run
    ratios, differ = [], 0
    for key, warm in sorted(rows["warm"].items()):
        cold = rows["cold"].get(key)
        if cold is None or warm["trials"] == cold["trials"] and warm["run"] == cold["run"]:
            continue  # the first shape: the same trials in both logs
        ratio = cold["median_ms"] / warm["median_ms"]
        shown = f"{ratio:.3f}"
        if warm["template"] == cold["template"] and warm["config"] == cold["config"]:
            shown = f"same config: 1.000 (timed {ratio:.3f})"
            ratio = 1.0  # two timings of one config: their ratio is run-to-run noise
        else:
            differ += 1
        ratios.append(ratio)
        lines.append(f"| {warm['template']} | {key} | {warm['median_ms']:.5g} | {cold['median_ms']:.5g} | {shown} |")
    if ratios:
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        lines.append(f"| {name} | geometric mean of {len(ratios)} shapes ({differ} on different configs) | | | {geo:.3f} |")
text = "\n".join(lines) + "\n"
open(f"{out}/warm_start.md", "w").write(text)
print(text)
PY
