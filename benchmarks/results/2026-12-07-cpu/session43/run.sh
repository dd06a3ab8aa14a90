#!/bin/bash
# One bayesian replay (budget 400), summarized on one line. Run from the repository root.
# usage: run.sh dataset options repeats first_seed   (KT=ktune binary, default build/ktune)
D=../shared/datasets/benchmark_hub
out=$(${KT:-build/ktune} replay --data $D/$1.json.gz --searcher bayesian --options "$2" --budget 400 --repeats $3 --seed $4 2>&1)
sc=$(echo "$out" | grep -oP "methodology score \K[-0-9.]+")
f100=$(echo "$out" | awk '$1==100{print $2}'); f400=$(echo "$out" | awk '$1==400{print $2}')
echo "$1 $2 seed$4 n$3 score=$sc f100=$f100 f400=$f400"
