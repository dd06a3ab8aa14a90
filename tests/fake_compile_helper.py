#!/usr/bin/env python3
# A compile helper that misbehaves, for the Builder's tests: it relays the hello handshake and
# (by mode) some compiles to the real `ktune-worker --compile` named by KTUNE_REAL_WORKER, and
# answers the others wrongly. FAKE_MODE: badcubin (a "compiled" answer whose cubin is not an
# ELF file), nonobject (a frame whose header is a JSON array), first_then_die (the first
# compile is relayed, then the process exits during the second).
import json
import os
import struct
import subprocess
import sys

MODE = os.environ.get("FAKE_MODE", "badcubin")
MAGIC = b"KTW1"


def read_exact(fd, n):
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            sys.exit(0)
        data += chunk
    return data


def read_frame(fd):
    prefix = read_exact(fd, 16)
    header_len, payload_len = struct.unpack("<IQ", prefix[4:])
    header = json.loads(read_exact(fd, header_len))
    payload = read_exact(fd, payload_len) if payload_len else b""
    return header, payload


def frame(header_bytes, payload=b""):
    return MAGIC + struct.pack("<IQ", len(header_bytes), len(payload)) + header_bytes + payload


real = subprocess.Popen([os.environ["KTUNE_REAL_WORKER"], "--compile"], stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def relay(header, payload):
    real.stdin.write(frame(json.dumps(header).encode(), payload))
    real.stdin.flush()
    answer, answer_payload = read_frame(real.stdout.fileno())
    os.write(1, frame(json.dumps(answer).encode(), answer_payload))


compiles = 0
while True:
    header, payload = read_frame(0)
    if header.get("type") == "quit":
        break
    if header.get("type") == "hello":
        relay(header, payload)
        continue
    compiles += 1
    if MODE == "first_then_die":
        if compiles == 1:
            relay(header, payload)
            continue
        os._exit(3)
    if MODE == "badcubin":
        answer = {"type": "compiled", "ok": True, "log": "", "compile_ms": 1.0}
        os.write(1, frame(json.dumps(answer).encode(), b"NOT A CUBIN"))
    if MODE == "nonobject":
        os.write(1, frame(b"[1, 2]"))
