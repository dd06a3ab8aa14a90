#!/usr/bin/env python3
"""Table and plots of the replay benchmark (benchmarks/replay_datasets.sh).

Reads DIR/<dataset>.<searcher>.json written by `ktune replay --json`, writes DIR/table.md and
DIR/summary.json (mean fraction of optimum with 95% CI per budget, random expectation,
methodology score) and DIR/<dataset>.png (mean fraction of optimum against evaluations, one
line per searcher, plus the exact random-search expectation).
usage: plot_replay.py DIR
"""
import glob
import json
import os
import sys

ORDER = ["random", "genetic", "annealing", "bayesian", "exhaustive"]


def load(directory):
    data = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        base = os.path.basename(path)
        if base == "summary.json" or base.count(".") < 2:
            continue
        with open(path) as f:
            doc = json.load(f)
        dataset = base.split(".")[0]
        for result in doc["results"]:
            entry = data.setdefault(dataset, {"doc": doc, "searchers": {}})
            entry["searchers"][result["searcher"]] = result
    return data


def write_table(directory, data):
    lines = ["# Replay benchmark: mean fraction of optimum (95% CI)", "",
             "Budget 200 / 400 evaluations; `random (exact)` is the calculated expectation of random",
             "sampling without replacement; score = methodology score (0 = random, 1 = optimum).", ""]
    summary = {}
    for dataset, entry in sorted(data.items()):
        doc = entry["doc"]
        lines += [f"## {dataset}", "",
                  f"{doc['records']} configs, {doc['failed_records']} failed, optimum {doc['optimum_ms']:.4g} ms", "",
                  "| searcher | runs | @25 | @50 | @100 | @200 | @400 | score (budgets) |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        rnd = doc["random_expectation_curve"]
        cells = [f"{rnd[b - 1]:.3f}" if b <= len(rnd) else "" for b in (25, 50, 100, 200, 400)]
        lines.append("| random (exact) | - | " + " | ".join(cells) + " | 0 |")
        summary[dataset] = {"records": doc["records"], "optimum_ms": doc["optimum_ms"],
                            "random_expectation": {str(b): rnd[b - 1] for b in (25, 50, 100, 200, 400) if b <= len(rnd)},
                            "searchers": {}}
        names = sorted(entry["searchers"], key=lambda n: ORDER.index(n) if n in ORDER else 99)
        for name in names:
            r = entry["searchers"][name]
            by_budget = {b["budget"]: b for b in r["budgets"]}
            cells = []
            for b in (25, 50, 100, 200, 400):
                x = by_budget.get(b)
                cells.append(f"{x['mean_fraction']:.3f} ±{(x['ci_high'] - x['ci_low']) / 2:.3f}" if x else "")
            s = r["score"]
            score = "n/a" if s["value"] is None else f"{s['value']:.3f} ({s['first']}-{s['last']}{'*' if s['truncated'] else ''})"
            runs = doc["repeats"] if "repeats" not in r else r["repeats"]
            lines.append(f"| {name} | {r.get('runs', runs)} | " + " | ".join(cells) + f" | {score} |")
            summary[dataset]["searchers"][name] = {"budgets": r["budgets"], "score": s, "seconds": r["seconds"],
                                                   "runs": r.get("runs", runs)}
        lines.append("")
    lines += ["`*` the runs end before random search closes 96% of the gap; the score averages up to the budget.", ""]
    with open(os.path.join(directory, "table.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(directory, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


def plot(directory, data):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for dataset, entry in sorted(data.items()):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        rnd = entry["doc"]["random_expectation_curve"]
        ax.plot(range(1, len(rnd) + 1), rnd, "k--", label="random (exact expectation)")
        names = sorted(entry["searchers"], key=lambda n: ORDER.index(n) if n in ORDER else 99)
        for name in names:
            curve = entry["searchers"][name]["mean_fraction_curve"]
            ax.plot(range(1, len(curve) + 1), curve, label=name)
        ax.set_xlabel("evaluations")
        ax.set_ylabel("mean fraction of optimum")
        ax.set_title(dataset)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
        fig.tight_layout()
        fig.savefig(os.path.join(directory, f"{dataset}.png"), dpi=110)
        plt.close(fig)


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results", "replay")
    data = load(directory)
    if not data:
        sys.exit(f"no replay results in {directory}")
    write_table(directory, data)
    plot(directory, data)


if __name__ == "__main__":
    main()
