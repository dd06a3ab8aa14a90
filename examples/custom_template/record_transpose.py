#!/usr/bin/env python3
"""Writes recorded reference data for transpose_recorded.T1.json: a random input matrix and
its transpose, as raw little-endian float32 files (the format KtuneExtensions.Reference's
InputFiles / OutputFiles expect: the argument's Type, element after element, nothing else).
Stands in for whatever program of yours produces trusted outputs.

Usage: python3 record_transpose.py [ROWS COLS]   (default 97 131, the document's Dimensions)
"""
import array
import os
import random
import sys

rows, cols = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) == 3 else (97, 131)
rng = random.Random(2026)
data = array.array("f", (rng.uniform(-1.0, 1.0) for _ in range(rows * cols)))
transposed = array.array("f", bytes(4 * rows * cols))
for r in range(rows):
    for c in range(cols):
        transposed[c * rows + r] = data[r * cols + c]
if sys.byteorder != "little":
    data.byteswap()
    transposed.byteswap()
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "transpose_in.bin"), "wb") as f:
    data.tofile(f)
with open(os.path.join(here, "transpose_out.bin"), "wb") as f:
    transposed.tofile(f)
print(f"wrote transpose_in.bin and transpose_out.bin ({rows} x {cols} float32)")
