#!/usr/bin/env python3
"""Names the kernel behind each cuBLASLt config that gpu_cublaslt_kernels re-timed, and sorts
the kernels into instruction families (issue 8: NVIDIA's own mma.sync kernels on this GPU).

Inputs: TIMING.json (gpu_cublaslt_kernels OUT.json) and NCU.csv, the raw CSV page of
`ncu --csv --page raw --metrics gpu__time_duration.sum` over
`gpu_cublaslt_kernels X.json --identify=TIMING.json`, in which every config's kernels follow a
marker kernel `ktune_config_marker` launched with grid.x = the config's id + 1.

The family comes from the kernel's name, as NVIDIA names them: Hopper's wgmma kernels carry
their arch and warpgroups (`sm90_xmma`, `gmma`, `warpgroup`, `nvjet`); kernels of the wmma API
`wmma`; CUDA-core kernels `sgemm` / `magma` / `simt` ("simt"); mma.sync kernels the mma shape
or the Ampere / Turing prefix (`s16816gemm`, `s1688gemm`, `tensor16x8x16`, `sm80_xmma`,
`ampere_`); anything else is "unknown" and printed with its name.

Usage: cublaslt_names.py TIMING.json NCU.csv OUT.json [--header /usr/local/cuda/include/cublasLt.h]
           [--peers N]
Writes OUT.json (each re-timed config with its kernel names and family) and prints, per dtype,
the fastest config of each family against cublasGemmEx, and the fastest configs overall.
OUT.json's "peers_argument" holds the N (default 2) fastest mma.sync configs of each dtype as
gpu_gemm's --cublaslt value ("f16/algo:tile:stages:swizzle:custom[:cluster];...").
"""
import argparse
import csv
import json
import os
import re
import sys

FAMILY_MARKS = (  # the first family whose mark the name holds
    ("wgmma", ("sm90_xmma", "gmma", "warpgroup", "nvjet", "sm90_tensorop", "cutlass3x_sm90")),
    ("wmma", ("wmma",)),
    ("simt", ("sgemm", "magma", "simt")),
    ("mma.sync", ("s16816", "h16816", "s1688", "h1688", "tensor16x8x16", "16x8x16", "sm80_",
                  "ampere_", "turing_", "_80_tensorop", "_75_tensorop")),
)


def family(name):
    """'wgmma', 'wmma', 'simt', 'mma.sync' or 'unknown' from a kernel name."""
    lower = name.lower()
    for fam, marks in FAMILY_MARKS:
        if any(mark in lower for mark in marks):
            return fam
    return "unknown"


def config_family(kernels):
    """The family of a config's kernels: helpers of unknown family (a split-k reduction) beside a
    tensor-core kernel do not count; "none" when ncu saw no kernel."""
    families = {family(k) for k in kernels}
    known = families - {"unknown"}
    return "+".join(sorted(known or families)) or "none"


def config_text(c):
    """A config as gpu_gemm --cublaslt reads it (the timing file's own text when it has one)."""
    text = ":".join(str(c[k]) for k in ("algo", "tile", "stages", "swizzle", "custom"))
    return c.get("config") or (text + (f":{c['cluster']}" if c.get("cluster") else ""))


def enum_names(header, prefix):
    """{value: NAME} of the `prefix`NAME = value entries of a C header ({} without one)."""
    names = {}
    if header and os.path.exists(header):
        with open(header) as f:
            for m in re.finditer(prefix + r"(\w+)\s*=\s*(\d+)", f.read()):
                names.setdefault(int(m.group(2)), m.group(1))
    return names


def ncu_rows(path):
    """The kernel rows of an ncu raw CSV page: dicts with 'Kernel Name' and 'Grid Size'."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        sys.exit(f"{path}: no ncu CSV header (a line starting with \"ID\") found")
    reader = csv.DictReader(lines[start:])
    rows = [row for row in reader if row.get("ID", "").strip().isdigit()]  # skips the units row
    if not rows:
        sys.exit(f"{path}: the ncu CSV has no kernel rows")
    return rows


def kernels_by_id(rows):
    """{config id: [kernel names]} from the markers' grid.x."""
    by_id, current = {}, None
    for row in rows:
        name = row["Kernel Name"]
        if "ktune_config_marker" in name:
            grid = re.match(r"\(?\s*(\d+)", row.get("Grid Size", ""))
            if not grid:
                sys.exit(f"marker row without a grid size: {row}")
            current = int(grid.group(1)) - 1
            by_id.setdefault(current, [])
        elif current is not None:
            by_id[current].append(name)
    return by_id


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("timing")
    parser.add_argument("ncu_csv")
    parser.add_argument("out")
    parser.add_argument("--header", default="/usr/local/cuda/include/cublasLt.h")
    parser.add_argument("--peers", type=int, default=2)
    args = parser.parse_args()
    with open(args.timing) as f:
        timing = json.load(f)
    names = kernels_by_id(ncu_rows(args.ncu_csv))
    tiles = enum_names(args.header, "CUBLASLT_MATMUL_TILE_")
    stages = enum_names(args.header, "CUBLASLT_MATMUL_STAGES_")
    out = {"timing": args.timing, "ncu_csv": args.ncu_csv, "dtypes": []}
    peers = []
    for entry in timing["dtypes"]:
        dtype = entry["dtype"]
        gemm_ex = names.get(entry["cublas_gemm_ex"]["id"], [])
        configs = []
        for row in entry["configs"]:
            kernels = names.get(row["id"], [])
            configs.append(dict(row, kernels=kernels, family=config_family(kernels),
                                tile_name=tiles.get(row["tile"], str(row["tile"])),
                                stages_name=stages.get(row["stages"], str(row["stages"]))))
        timed = [c for c in configs if "ratio_to_cublas" in c]
        timed.sort(key=lambda c: -c["ratio_to_cublas"])
        best = {}
        for c in timed:
            best.setdefault(c["family"], c)
        peers += [f"{dtype}/{config_text(c)}" for c in timed if c["family"] == "mma.sync"][:args.peers]
        out["dtypes"].append({"dtype": dtype, "cublas_gemm_ex_kernels": gemm_ex,
                              "best_by_family": best, "configs": configs})
        print(f"== {dtype}: cublasGemmEx runs {', '.join(gemm_ex) or '(not seen)'}")
        print(f"   {len(configs)} configs re-timed, {len(names)} markers seen")
        for fam, c in sorted(best.items(), key=lambda kv: -kv[1]["ratio_to_cublas"]):
            print(f"   best {fam:9s} {c['ratio_to_cublas']:.3f}x ({c['tflops']:.0f} vs "
                  f"{c['cublas_tflops']:.0f} TFLOP/s, {c['sm_mhz']} / {c['cublas_sm_mhz']} MHz) "
                  f"algo {c['algo']} {c['tile_name']} {c['stages_name']}: {' | '.join(c['kernels'])}")
        print("   fastest 12:")
        for c in timed[:12]:
            print(f"     {c['ratio_to_cublas']:.3f}x {c['family']:9s} algo {c['algo']:3d} "
                  f"{c['tile_name']:>10s} {c['stages_name']:>8s}: {' | '.join(c['kernels'])}")
    out["peers_argument"] = ";".join(peers)
    print(f"peers: {out['peers_argument']}")
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
