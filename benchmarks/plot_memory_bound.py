#!/usr/bin/env python3
"""Bar chart of the memory-bound benchmark: % of device-to-device copy bandwidth per shape for
the tuned ktune kernel, its untuned default config and PyTorch (issue 6).

Usage: python3 benchmarks/plot_memory_bound.py OUT.png KTUNE.json [KTUNE2.json ...]
           [--torch TORCH.json [TORCH2.json ...]] [--stream KTUNE_STREAM.json ...] [--table]
KTUNE*.json come from gpu_memory_bound (several when it ran in parts); TORCH*.json from
benchmarks/peers/torch_memory_bound.py (one per part, same device call as its ktune part); a
task in several files of one side keeps the last file's row. Each side's % is normalized by the
copy bandwidth its own program measured. --table also prints a Markdown table (tuned / default /
torch % of copy, the tuned / torch speed ratio and, where the run timed it, a device copy of the
task's own bytes: the ceiling at that size) for the results README. The speed ratio comes from
the two programs' times (torch_ms / tuned_ms); where a file lacks them it falls back to the ratio
of the two % figures (marked, and off by torch's copy / ktune's copy bandwidth). A torch file
timed with another number of calls per sample than the ktune files' runs per sample is named
in a warning (on short kernels the launch cost of single calls lands in their samples).
--stream names files of the same tasks timed on a plain stream when KTUNE*.json were timed with
programmatic launch (gpu_memory_bound --programmatic): their tuned figure becomes a bar and a
column of its own, so that both launch forms stand side by side. Series are labelled by the
launch form their files record ("programmatic_launch").
Without matplotlib only the table is printed.
"""
import argparse
import json
import sys


def key(row):
    """(family, op, shape, dtype) of a result row of either program."""
    attrs = row["attrs"]
    op = attrs.get("fn") or attrs.get("norm")
    return (row["family"], op, row["shape"], attrs["dtype"])


def order(row):
    """Issue order: elementwise, reduction, layernorm, rmsnorm; f32 before f16; by shape."""
    _, op, shape, dtype = key(row)
    ops = ["gelu_tanh", "sum", "layernorm", "rmsnorm"]
    dims = [int(v) for v in shape.split("x")]
    return (ops.index(op) if op in ops else len(ops), dtype != "f32", dims[-1], dims[0])


def last_rows(paths):
    """The "results" rows of the files, the last file winning per key(), and the "copy_gbps" and
    "device" of each file."""
    rows, docs = {}, []
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        docs.append(doc)
        for row in doc["results"]:
            rows[key(row)] = row
    return list(rows.values()), docs


def speed_ratio(row, peer):
    """(tuned / torch speed, True when from the two times; False: from the two % of copy, which
    each program measured against its own copy bandwidth); (None, True) without both figures."""
    if peer is None:
        return None, True
    if "tuned_ms" in row and "torch_ms" in peer:
        if row["tuned_ms"] and peer["torch_ms"]:
            return peer["torch_ms"] / row["tuned_ms"], True
        return None, True
    if row["tuned_pct_of_copy"] and peer["torch_pct_of_copy"]:
        return row["tuned_pct_of_copy"] / peer["torch_pct_of_copy"], False
    return None, True


def sampling_mismatches(ktune_docs, torch_docs, torch_paths):
    """One sentence per torch file whose calls per sample differs from the runs per sample of
    any ktune file (a file written before its program recorded the field was timed one per
    sample: 1 when absent, on either side)."""
    runs = sorted({doc.get("runs_per_sample", 1) for doc in ktune_docs})
    lines = []
    for path, doc in zip(torch_paths, torch_docs):
        calls = doc.get("calls_per_sample", 1)
        if runs != [calls]:
            fewer = ("the torch figures" if calls < min(runs) else
                     "the ktune figures" if calls > max(runs) else "the figures of some files")
            lines.append("{} timed torch at {} call(s) per sample, ktune at {} run(s) per sample: "
                         "on short kernels {} carry launch costs the others do not".format(
                             path, calls, "/".join(str(r) for r in runs), fewer))
    return lines


def launch_label(docs):
    """How a side's files launched their kernels, for labels."""
    forms = {("programmatic launch" if d.get("programmatic_launch") else "stream") +
             (", graphs" if d.get("graph") else "") for d in docs}
    return " / ".join(sorted(forms))


def draw(out_png, rows, torch_vals, title, tuned_label, stream_vals=None, stream_label=""):
    """Writes the grouped bar chart; returns False when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    labels = ["{}\n{} {}".format(*key(r)[1:]) for r in rows]
    series = [([r["tuned_pct_of_copy"] for r in rows], "ktune tuned ({})".format(tuned_label))]
    if stream_vals is not None:
        series.append((stream_vals, "ktune tuned ({})".format(stream_label)))
    series.append(([r["default_pct_of_copy"] for r in rows],
                   "ktune default config ({})".format(tuned_label)))
    if any(torch_vals):
        series.append((torch_vals, "torch"))
    width = 0.8 / len(series)
    xs = list(range(len(rows)))
    fig, ax = plt.subplots(figsize=(max(10, 0.75 * len(rows)), 5.5))
    for i, (values, label) in enumerate(series):
        ax.bar([x + (i - (len(series) - 1) / 2) * width for x in xs], values, width, label=label)
    ax.axhline(100, color="black", linewidth=0.8)
    ax.axhline(95, color="gray", linestyle="--", linewidth=0.8)
    ax.axhline(90, color="gray", linestyle=":", linewidth=0.8)
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=90, fontsize=7)
    ax.set_ylabel("% of device-to-device copy bandwidth")
    ax.set_ylim(0, 110)
    ax.set_title(title)
    ax.legend(loc="lower left")
    fig.tight_layout()
    fig.savefig(out_png, dpi=130)
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_png")
    parser.add_argument("ktune_json", nargs="+")
    parser.add_argument("--torch", dest="torch_json", nargs="+", default=[])
    parser.add_argument("--stream", dest="stream_json", nargs="+", default=[])
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args()

    rows, docs = last_rows(args.ktune_json)
    copy = [doc["copy_gbps"] for doc in docs]
    device = "GPU"
    for doc in docs:
        device = doc.get("device", device)
    torch_rows, torch_docs = last_rows(args.torch_json)
    torch_rows = {key(r): r for r in torch_rows}
    mismatches = sampling_mismatches(docs, torch_docs, args.torch_json)
    for line in mismatches:
        print("warning:", line, file=sys.stderr)
    rows.sort(key=order)
    peers = [torch_rows.get(key(r)) for r in rows]
    torch_vals = [p["torch_pct_of_copy"] if p else 0.0 for p in peers]

    stream_rows, stream_docs = last_rows(args.stream_json)
    stream_rows = {key(r): r for r in stream_rows}
    stream_vals = None
    if args.stream_json:
        stream_vals = [stream_rows[key(r)]["tuned_pct_of_copy"] if key(r) in stream_rows else 0.0
                       for r in rows]

    title = "Memory-bound templates on {} (copy {:.0f} GB/s)".format(device, sum(copy) / len(copy))
    if draw(args.out_png, rows, torch_vals, title, launch_label(docs), stream_vals,
            launch_label(stream_docs)):
        print("wrote", args.out_png)
    else:
        print("matplotlib is not installed: no chart")
    if args.table:
        other = " | tuned, {}".format(launch_label(stream_docs)) if stream_vals is not None else ""
        print("| op | shape | dtype | tuned, {}{} | default | torch | tuned / torch speed | "
              "copy of the same bytes | trials |".format(launch_label(docs), other))
        print("| --- | --- | --- | ---: |{} ---: | ---: | ---: | ---: | ---: |".format(
            " ---: |" if other else ""))
        from_pct = False
        for i, (r, p, t) in enumerate(zip(rows, peers, torch_vals)):
            value, timed = speed_ratio(r, p)
            ratio = "-" if value is None else "{:.2f}x{}".format(value, "" if timed else " *")
            from_pct = from_pct or not timed
            same = r.get("same_bytes_copy_pct_of_copy")
            stream = ""
            if stream_vals is not None:
                stream = " {} |".format("{:.1f} %".format(stream_vals[i]) if stream_vals[i] else "-")
            print("| {} | {} | {} | {:.1f} % |{} {:.1f} % | {} | {} | {} | {} |".format(
                key(r)[1], r["shape"], r["attrs"]["dtype"], r["tuned_pct_of_copy"], stream,
                r["default_pct_of_copy"], "{:.1f} %".format(t) if t else "-", ratio,
                "{:.1f} %".format(same) if same else "-", r["trials"]))
        for line in mismatches:
            print("\nNote: " + line)
        if from_pct:
            print("\n\\* no time in one of the files: the ratio of the two % of copy, each of its "
                  "own program's copy bandwidth (off from the speed ratio by torch / ktune copy)")


if __name__ == "__main__":
    main()
