#!/usr/bin/env python3
"""make_fixtures.py: how the hand-written golden bundles were authored.

Each fixture below replays, call by call, the stream capture of one sample in
samples/ (the same issue() sequence: launches, records, waits, memsets,
copies, stream-ordered allocations) through a small model of CUDA stream
capture, the same rules as samples/common.h's recorder: a node depends on
its stream predecessor (a "stream" edge) and on the latest record of every
event its stream waited for since its previous node (an "event" edge naming
the event); streams are labelled in the order they join the capture, events
in the order of their first record. On top of the topology each node gets
what sgcap's capture records: mangled kernel names (from the samples' PTX),
launch geometry, the parameter layout cuFuncGetParamInfo reports (natural
alignment) and the argument bytes, whose pointer words point into the
fixture's buffers; buffers with addresses and sizes; per-node reads and
writes. The four bug_* fixtures plant one hazard each for rewrite/'s hazard
checker (see README.md beside this file).

The committed graph.json files are the fixtures; this script only makes them
reproducible and easy to extend. `python3 tests/golden/make_fixtures.py`
rewrites every tests/golden/<name>.sgraph/graph.json; `--check` compares
instead and exits 1 on any difference: with the files, with the samples'
reviewed topologies (samples/expected/<name>.topo), with the hazards each
fixture must (not) have, and, given SGCAP_SAMPLES_BIN=<dir of built
samples>, with `<sample> --expect`.
"""
import hashlib
import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# CUgraphNodeType values, as the capture records them in cuda_type.
CUDA_TYPE = {"kernel": 0, "memcpy": 1, "memset": 2, "host": 3, "child_graph": 4, "empty": 5,
             "event_wait": 6, "event_record": 7, "mem_alloc": 10, "mem_free": 11}

N = 1 << 20            # elements per buffer: the samples' default --n
BLOCK = 256
GRID = (N + BLOCK - 1) // BLOCK
DEVICE_BASE = 0x7f4c1a000000   # cudaMalloc'd buffers, 2 MiB aligned, one after another
GRAPH_POOL_BASE = 0x7f4bf4000000  # the graph memory pool's reservation


def addr(v):
    return "0x%x" % v


def xxh64(data, seed=0):
    """XXH64, the bundle's content hash (FORMAT.md section 1)."""
    M = (1 << 64) - 1
    P1, P2, P3 = 11400714785074694791, 14029467366897019727, 1609587929392839161
    P4, P5 = 9650029242287828579, 2870177450012600261

    def rotl(x, r):
        return ((x << r) | (x >> (64 - r))) & M

    def rnd(acc, lane):
        return (rotl((acc + lane * P2) & M, 31) * P1) & M

    def merge(acc, v):
        return ((acc ^ rnd(0, v)) * P1 + P4) & M

    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed, (seed - P1) & M]
        while i + 32 <= n:
            for k in range(4):
                v[k] = rnd(v[k], struct.unpack_from("<Q", data, i + 8 * k)[0])
            i += 32
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & M
        for k in range(4):
            h = merge(h, v[k])
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while i + 8 <= n:
        h ^= rnd(0, struct.unpack_from("<Q", data, i)[0])
        h = (rotl(h, 27) * P1 + P4) & M
        i += 8
    if i + 4 <= n:
        h ^= (struct.unpack_from("<I", data, i)[0] * P1) & M
        h = (rotl(h, 23) * P2 + P3) & M
        i += 4
    while i < n:
        h ^= (data[i] * P5) & M
        h = (rotl(h, 11) * P1) & M
        i += 1
    h ^= h >> 33
    h = (h * P2) & M
    h ^= h >> 29
    h = (h * P3) & M
    h ^= h >> 32
    return "%016x" % h


# Programs whose kernels the bundle holds no code of: NCCL's live in
# libnccl, which the capture does not record (the image's bytes are absent).
NO_CODE = {"nccl_allreduce"}


def code_image(program):
    """The fixture's code image (tests/golden/code/, made by gen.sh): the
    sample's own fatbin, or the planted bugs' kernels; None for NO_CODE."""
    if program in NO_CODE:
        return None
    name = "bug_kernels" if program.startswith("bug_") else program
    with open(os.path.join(HERE, "code", name + ".fatbin"), "rb") as f:
        return f.read()


class Capture:
    """One stream capture, recorded the way sgcap's shim records it."""

    def __init__(self, program, n_streams, n_events, pid, origin=0):
        self.program = program
        self.pid = pid
        self.streams = {}      # sample stream id -> label index
        self.events = {}       # sample event id -> label index
        self.n_events = n_events
        self.last = {}         # sample stream id -> last node id
        self.pending = {}      # sample stream id -> [(event label, src node)]
        self.bound = {}        # sample event id -> node its latest record binds to
        self.nodes = []
        self.edges = []
        self.buffers = []
        self.buffer_by_name = {}
        self.kernels = {}      # mangled name -> func handle
        self.next_device = DEVICE_BASE
        self.origin = origin
        self.rank = None       # a launcher's rank and the device ordinal (format version 4)
        self.ordinal = None
        self._join(origin)

    # -- tables
    def _join(self, s):
        if s not in self.streams:
            self.streams[s] = len(self.streams)
            self.pending[s] = []

    def device_buffer(self, name, size=N * 4, kind="device"):
        b = {"id": len(self.buffers), "label": name, "kind": kind,
             "address": self.next_device, "size": size}
        self.next_device += (size + (2 << 20) - 1) // (2 << 20) * (2 << 20)
        self.buffers.append(b)
        self.buffer_by_name[name] = b
        return b

    def graph_buffer(self, name, address, size=N * 4):
        b = {"id": len(self.buffers), "label": name, "kind": "graph_alloc",
             "address": address, "size": size}
        self.buffers.append(b)
        self.buffer_by_name[name] = b
        return b

    # -- capture calls
    def _node(self, s, ntype, payload):
        if s not in self.streams:
            raise SystemExit("%s: node on a stream that has not joined" % self.program)
        nid = len(self.nodes)
        node = {"id": nid, "type": ntype, "stream": self.streams[s], "seq": nid,
                "cuda_type": CUDA_TYPE[ntype]}
        node.update(payload)
        self.nodes.append(node)
        if s in self.last:
            self._edge(self.last[s], nid, "stream")
        for ev, src in self.pending[s]:
            self._edge(src, nid, "event", ev)
        self.pending[s] = []
        self.last[s] = nid
        return nid

    def _edge(self, a, b, kind, event=None):
        e = {"id": len(self.edges), "from": a, "to": b, "kind": kind}
        if event is not None:
            e["event"] = event
        self.edges.append(e)

    def record(self, ev, s):
        if s not in self.last or self.pending[s]:
            raise SystemExit("%s: record needs a node right before it" % self.program)
        if ev not in self.events:
            self.events[ev] = len(self.events)
        self.bound[ev] = self.last[s]

    def wait(self, s, ev):
        self._join(s)
        self.pending[s].append((self.events[ev], self.bound[ev]))

    def launch(self, s, name, args, access, grid=(GRID, 1, 1), block=(BLOCK, 1, 1),
               duration=None):
        """args: list of (type, value); a 'ptr' value is (buffer name, byte offset).
        access: list of (buffer name, mode) or (buffer name, mode, offset, size)."""
        layout, raw, off = [], b"", 0
        for t, v in args:
            size = len(v) if t == "bytes" else {
                "ptr": 8, "u64": 8, "i64": 8, "f64": 8, "u32": 4, "i32": 4, "f32": 4}[t]
            pad = (-off) % (8 if t == "bytes" else size)
            raw += b"\0" * pad
            off += pad
            if t == "bytes":  # a struct passed by value
                raw += v
            elif t == "ptr":
                buf, boff = v
                raw += struct.pack("<Q", self.buffer_by_name[buf]["address"] + boff)
            else:
                raw += struct.pack({"u64": "<Q", "i64": "<q", "f64": "<d", "u32": "<I",
                                    "i32": "<i", "f32": "<f"}[t], v)
            layout.append([off, size])
            off += size
        raw += b"\0" * ((-off) % 8)  # the argument buffer ends 8-aligned
        if name not in self.kernels:
            self.kernels[name] = 0x55e3a41c0000 + 0x1a0 * len(self.kernels)
        kernel = {"name": name, "image": 0, "grid": list(grid), "block": list(block),
                  "func_handle": addr(self.kernels[name]),
                  "params": {"bytes": raw.hex(), "layout": layout}}
        payload = {"kernel": kernel, "accesses": self._accesses(access)}
        if duration is not None:
            payload["duration_ns"] = duration
        return self._node(s, "kernel", payload)

    def _accesses(self, access):
        out = []
        for a in access:
            b = self.buffer_by_name[a[0]]
            offset, size = (a[2], a[3]) if len(a) > 2 else (0, b["size"])
            out.append({"buffer": b["id"], "offset": offset, "size": size, "mode": a[1]})
        return out

    def memset(self, s, buf, value, nbytes):
        b = self.buffer_by_name[buf]
        return self._node(s, "memset", {
            "memset": {"dst": addr(b["address"]), "pitch": 0, "value": value, "element_size": 1,
                       "width": nbytes, "height": 1},
            "accesses": self._accesses([(buf, "write", 0, nbytes)])})

    def memcpy(self, s, dst, src, nbytes):
        d, r = self.buffer_by_name[dst], self.buffer_by_name[src]
        return self._node(s, "memcpy", {
            "memcpy": {"dst": addr(d["address"]), "src": addr(r["address"]), "width": nbytes,
                       "height": 1, "depth": 1, "kind": "d2d"},
            "accesses": self._accesses([(src, "read", 0, nbytes), (dst, "write", 0, nbytes)])})

    def malloc(self, s, buf):
        b = self.buffer_by_name[buf]
        nid = self._node(s, "mem_alloc", {"mem": {"buffer": b["id"], "address": addr(b["address"]),
                                                  "bytes": b["size"]}})
        b["alloc_node"] = nid
        return nid

    def free(self, s, buf):
        b = self.buffer_by_name[buf]
        return self._node(s, "mem_free", {"mem": {"buffer": b["id"],
                                                  "address": addr(b["address"])}})

    # -- output
    def expect_text(self):
        """The capture as samples/common.h's --expect prints it (format v1)."""
        by_label = sorted(self.streams.items(), key=lambda kv: kv[1])
        index_on_stream = {}
        lines = ["# sgcap expected topology v1", "graph 0"]
        for _, label in by_label:
            types = []
            for nd in self.nodes:
                if nd["stream"] == label:
                    index_on_stream[nd["id"]] = len(types)
                    types.append(nd["type"])
            lines.append("stream s%d %s" % (label, " ".join(types)))
        for e in self.edges:
            if e["kind"] != "event":
                continue
            a, b = self.nodes[e["from"]], self.nodes[e["to"]]
            lines.append("event e%d s%d:%d -> s%d:%d" % (
                e["event"], a["stream"], index_on_stream[a["id"]], b["stream"],
                index_on_stream[b["id"]]))
        return "\n".join(lines) + "\n"

    def bundle(self, crosscheck=True):
        for s, pend in self.pending.items():
            if pend:
                raise SystemExit("%s: a wait with no node after it" % self.program)
        self.code = code_image(self.program)
        if self.code is None:  # an image recorded without its bytes
            digest = hashlib.sha256(self.program.encode()).hexdigest()
            image = {"id": 0, "kind": "fatbin", "hash": digest[:16],
                     "size": 9000 + int(digest[16:20], 16) % 30000}
        else:
            digest = xxh64(self.code)
            image = {"id": 0, "kind": "fatbin", "hash": digest,
                     "file": "code/%s.fatbin" % digest, "size": len(self.code)}
        image.update({"ptx_archs": [90], "sass_archs": [90]})
        streams = [{"id": i, "label": "s%d" % i, "handle": addr(0x55e3a3f01a30 + 0x2b0 * i),
                    "cuda_id": 13 + i, "priority": 0, "flags": 1}
                   for i in range(len(self.streams))]
        events = [{"id": i, "label": "e%d" % i, "handle": addr(0x55e3a3f9c6d0 + 0x70 * i),
                   "flags": 2} for i in range(len(self.events))]
        doc = {
            "format": "sgcap-bundle",
            "version": 1,
            "capture": {"program": self.program, "pid": self.pid, "capture_id": 1,
                        "sequence": 0, "mode": "global"},
            "device": {"name": "NVIDIA H200", "cc_major": 9, "cc_minor": 0,
                       "driver_version": 13000, "total_memory": 150754820096,
                       "sm_count": 132,
                       "mem_bandwidth_gbs": 4800},
        }
        if self.rank is not None or self.ordinal is not None:
            doc["version"] = 4
            if self.rank is not None:
                doc["capture"]["rank"] = self.rank
            if self.ordinal is not None:
                doc["device"]["ordinal"] = self.ordinal
        if crosscheck:
            doc["crosscheck"] = {"done": True, "ok": True, "cuda_node_count": len(self.nodes),
                                 "cuda_edge_count": len(self.edges)}
        doc.update({
            "streams": streams,
            "events": events,
            "buffers": [dict(b, address=addr(b["address"])) for b in self.buffers],
            "images": [image],
            "nodes": self.nodes,
            "edges": self.edges,
        })
        return doc


def to_json(doc):
    """Readable and diffable: one table entry, node or edge per line."""
    out = ["{"]
    keys = list(doc)
    for i, k in enumerate(keys):
        v = doc[k]
        comma = "," if i + 1 < len(keys) else ""
        if isinstance(v, list) and v:
            out.append('  "%s": [' % k)
            for j, item in enumerate(v):
                out.append("    " + json.dumps(item) + ("," if j + 1 < len(v) else ""))
            out.append("  ]" + comma)
        else:
            out.append('  "%s": %s%s' % (k, json.dumps(v), comma))
    out.append("}")
    return "\n".join(out) + "\n"


# ---- kernels (mangled names from the samples' PTX) -------------------------

def P(buf, off=0):
    return ("ptr", (buf, off))


def n64(n=N):
    return ("u64", n)


# ---- the sample topologies ---------------------------------------------------

def fork_join():
    c = Capture("fork_join", 3, 3, 4101)
    for b in ("x", "a", "b", "c", "out"):
        c.device_buffer(b)
    axpb = "_Z6k_axpbPfPKfffm"
    c.launch(0, axpb, [P("a"), P("x"), ("f32", 1.5), ("f32", 0.25), n64()],
             [("x", "read"), ("a", "write")])
    c.record(0, 0)
    c.wait(1, 0)
    c.launch(1, axpb, [P("b"), P("a"), ("f32", -0.5), ("f32", 2.0), n64()],
             [("a", "read"), ("b", "write")])
    c.launch(1, "_Z8k_squarePfm", [P("b"), n64()], [("b", "readwrite")])
    c.record(1, 1)
    c.wait(2, 0)
    c.launch(2, axpb, [P("c"), P("a"), ("f32", 3.0), ("f32", -1.0), n64()],
             [("a", "read"), ("c", "write")])
    c.record(2, 2)
    c.wait(0, 1)
    c.wait(0, 2)
    c.launch(0, "_Z9k_combinePfPKfS1_m", [P("out"), P("b"), P("c"), n64()],
             [("b", "read"), ("c", "read"), ("out", "write")])
    return c


def ping_pong():
    c = Capture("ping_pong", 2, 2, 4102)
    for b in ("x", "y", "out"):
        c.device_buffer(b)
    for k in range(8):
        s = k % 2
        if k > 0:
            c.wait(s, 1 - s)
        if s == 0:
            c.launch(0, "_Z6k_evenPjPKjjm", [P("x"), P("y"), ("u32", k), n64()],
                     [("x", "readwrite"), ("y", "read")])
        else:
            c.launch(1, "_Z5k_oddPKjPjjm", [P("x"), P("y"), ("u32", k), n64()],
                     [("x", "read"), ("y", "readwrite")])
        c.record(s, s)
    c.wait(0, 1)
    c.launch(0, "_Z5k_sumPjPKjS1_m", [P("out"), P("x"), P("y"), n64()],
             [("x", "read"), ("y", "read"), ("out", "write")])
    return c


def pipeline(stages, pid, durations):
    chunks = 4
    c = Capture("pipeline%d" % stages, stages, (stages - 1) * chunks + 1, pid)
    for i in range(stages + 1):
        c.device_buffer("buf%d" % i)
    c.device_buffer("out")
    done = (stages - 1) * chunks
    for ch in range(chunks):
        lo, hi = N * ch // chunks, N * (ch + 1) // chunks
        for st in range(stages):
            if st > 0:
                c.wait(st, (st - 1) * chunks + ch)
            c.launch(st, "_Z7k_stagePjPKjjm",
                     [P("buf%d" % (st + 1), lo * 4), P("buf%d" % st, lo * 4), ("u32", st),
                      n64(hi - lo)],
                     [("buf%d" % st, "read", lo * 4, (hi - lo) * 4),
                      ("buf%d" % (st + 1), "write", lo * 4, (hi - lo) * 4)],
                     grid=((hi - lo + BLOCK - 1) // BLOCK, 1, 1),
                     duration=1088.0 + 32.0 * st if durations else None)
            if st < stages - 1:
                c.record(st * chunks + ch, st)
    c.record(done, stages - 1)
    c.wait(0, done)
    c.memcpy(0, "out", "buf%d" % stages, N * 4)
    return c


def diamond():
    c = Capture("diamond", 4, 4, 4105)
    for b in ("x", "a", "b", "c", "d", "out"):
        c.device_buffer(b)
    c.launch(0, "_Z9k_producePjPKjm", [P("a"), P("x"), n64()], [("x", "read"), ("a", "write")])
    c.record(0, 0)
    c.wait(1, 0)
    c.launch(1, "_Z6k_leftPjPKjm", [P("b"), P("a"), n64()], [("a", "read"), ("b", "write")])
    c.record(1, 1)
    c.wait(2, 0)
    c.launch(2, "_Z7k_rightPjPKjm", [P("c"), P("a"), n64()], [("a", "read"), ("c", "write")])
    c.record(2, 2)
    c.wait(3, 1)
    c.wait(3, 2)
    c.launch(3, "_Z6k_joinPjPKjS1_m", [P("d"), P("b"), P("c"), n64()],
             [("b", "read"), ("c", "read"), ("d", "write")])
    c.record(3, 3)
    c.wait(0, 3)
    c.launch(0, "_Z8k_finishPjPKjm", [P("out"), P("d"), n64()], [("d", "read"), ("out", "write")])
    return c


def event_reuse():
    c = Capture("event_reuse", 3, 3, 4106)
    for b in ("in", "x1", "x2", "y", "z", "out"):
        c.device_buffer(b)
    c.launch(0, "_Z7k_firstPjPKjm", [P("x1"), P("in"), n64()], [("in", "read"), ("x1", "write")])
    c.record(0, 0)  # first record of E: binds to k_first
    c.wait(1, 0)
    c.launch(1, "_Z11k_use_firstPjPKjm", [P("y"), P("x1"), n64()],
             [("x1", "read"), ("y", "write")])
    c.launch(0, "_Z8k_secondPjPKjjm", [P("x2"), P("x1"), ("u32", 20000), n64()],
             [("x1", "read"), ("x2", "write")])
    c.record(0, 0)  # second record of E: now binds to k_second
    c.wait(2, 0)
    c.launch(2, "_Z12k_use_secondPjPKjm", [P("z"), P("x2"), n64()],
             [("x2", "read"), ("z", "write")])
    c.record(1, 1)
    c.record(2, 2)
    c.wait(0, 1)
    c.wait(0, 2)
    c.launch(0, "_Z5k_sumPjPKjS1_m", [P("out"), P("y"), P("z"), n64()],
             [("y", "read"), ("z", "read"), ("out", "write")])
    return c


def two_waiters():
    c = Capture("two_waiters", 3, 3, 4107)
    for b in ("in", "a", "b", "y", "z", "out"):
        c.device_buffer(b)
    c.launch(0, "_Z9k_producePjPKjjm", [P("a"), P("in"), ("u32", 20000), n64()],
             [("in", "read"), ("a", "write")])
    c.record(0, 0)
    c.launch(0, "_Z8k_squarePjPKjm", [P("b"), P("a"), n64()], [("a", "read"), ("b", "write")])
    c.wait(1, 0)
    c.launch(1, "_Z7k_wait1PjPKjm", [P("y"), P("a"), n64()], [("a", "read"), ("y", "write")])
    c.wait(2, 0)
    c.launch(2, "_Z7k_wait2PjPKjm", [P("z"), P("a"), n64()], [("a", "read"), ("z", "write")])
    c.record(1, 1)
    c.record(2, 2)
    c.wait(0, 1)
    c.wait(0, 2)
    c.launch(0, "_Z6k_sum3PjPKjS1_S1_m", [P("out"), P("b"), P("y"), P("z"), n64()],
             [("b", "read"), ("y", "read"), ("z", "read"), ("out", "write")])
    return c


def async_alloc():
    c = Capture("async_alloc", 2, 2, 4108)
    for b in ("x", "out1", "w"):
        c.device_buffer(b)
    c.graph_buffer("tmp", GRAPH_POOL_BASE)
    c.malloc(0, "tmp")
    c.launch(0, "_Z6k_fillPjPKjm", [P("tmp"), P("x"), n64()], [("x", "read"), ("tmp", "write")],
             duration=2912.0)
    c.record(0, 0)
    c.wait(1, 0)
    c.launch(1, "_Z5k_usePjPKjm", [P("out1"), P("tmp"), n64()],
             [("tmp", "read"), ("out1", "write")], duration=2944.0)
    c.record(1, 1)
    c.launch(0, "_Z7k_otherPjPKjm", [P("w"), P("x"), n64()], [("x", "read"), ("w", "write")],
             duration=2880.0)
    c.wait(0, 1)
    c.free(0, "tmp")
    return c


def chains():
    c = Capture("chains", 2, 2, 4109)
    c.device_buffer("inf")
    c.device_buffer("ini")
    c.device_buffer("ind", N * 8)
    c.device_buffer("out4")
    c.device_buffer("out8")
    c.device_buffer("acc")
    c.device_buffer("out2")
    c.device_buffer("outd", N * 8)
    c.graph_buffer("t1", GRAPH_POOL_BASE)
    c.graph_buffer("t2", GRAPH_POOL_BASE + N * 4)
    c.memset(0, "acc", 0, N * 4)
    c.record(0, 0)
    c.wait(1, 0)
    for k in range(4):
        c.launch(1, "_Z9k_i4_stepPjPKjim", [P("acc"), P("ini"), ("i32", k), n64()],
                 [("acc", "readwrite"), ("ini", "read")])
    c.launch(1, "_Z6k_d2_aPdPKdm", [P("outd"), P("ind"), n64()],
             [("ind", "read"), ("outd", "write")])
    c.launch(1, "_Z6k_d2_bPdm", [P("outd"), n64()], [("outd", "readwrite")])
    c.record(1, 1)
    c.malloc(0, "t1")
    c.malloc(0, "t2")
    c.launch(0, "_Z6k_f4_aPfPKfm", [P("t1"), P("inf"), n64()], [("inf", "read"), ("t1", "write")])
    c.launch(0, "_Z6k_f4_bPfPKfm", [P("t2"), P("t1"), n64()], [("t1", "read"), ("t2", "write")])
    c.launch(0, "_Z6k_f4_cPfPKfS1_m", [P("t1"), P("t2"), P("inf"), n64()],
             [("t2", "read"), ("inf", "read"), ("t1", "write")])
    c.launch(0, "_Z6k_f4_dPfPKfm", [P("out4"), P("t1"), n64()],
             [("t1", "read"), ("out4", "write")])
    c.free(0, "t1")
    c.free(0, "t2")
    c.launch(0, "_Z10k_f8_firstPfPKfm", [P("out8"), P("inf"), n64()],
             [("inf", "read"), ("out8", "write")])
    for k in range(1, 8):
        c.launch(0, "_Z9k_f8_stepPfim", [P("out8"), ("i32", k), n64()], [("out8", "readwrite")])
    c.wait(0, 1)
    c.launch(0, "_Z6k_i2_aPjPKjm", [P("out2"), P("acc"), n64()],
             [("acc", "read"), ("out2", "write")])
    c.launch(0, "_Z6k_i2_bPjm", [P("out2"), n64()], [("out2", "readwrite")])
    return c


def chain_barrier():
    c = Capture("chain_barrier", 2, 2, 4110)
    for b in ("x", "t", "u", "v", "out"):
        c.device_buffer(b)
    axpb, square = "_Z6k_axpbPfPKfffm", "_Z8k_squarePfm"
    c.launch(0, axpb, [P("t"), P("x"), ("f32", 2.0), ("f32", 1.0), n64()],
             [("x", "read"), ("t", "write")])
    c.launch(0, square, [P("t"), n64()], [("t", "readwrite")])
    c.record(0, 0)
    c.launch(0, axpb, [P("u"), P("t"), ("f32", 0.5), ("f32", 3.0), n64()],
             [("t", "read"), ("u", "write")])
    c.launch(0, square, [P("u"), n64()], [("u", "readwrite")])
    c.wait(1, 0)
    c.launch(1, axpb, [P("v"), P("t"), ("f32", -1.0), ("f32", 4.0), n64()],
             [("t", "read"), ("v", "write")])
    c.record(1, 1)
    c.wait(0, 1)
    c.launch(0, "_Z5k_addPfPKfS1_m", [P("out"), P("u"), P("v"), n64()],
             [("u", "read"), ("v", "read"), ("out", "write")])
    return c


def stencil():
    c = Capture("stencil", 2, 2, 4111)
    for b in ("in", "in2", "x", "y", "u", "v", "out"):
        c.device_buffer(b)
    h = N // 1024
    grid2, block2 = (1024 // 32, h // 8, 1), (32, 8, 1)
    c.launch(0, "_Z6k_initPjPKjm", [P("x"), P("in"), n64()], [("in", "read"), ("x", "write")])
    c.record(0, 0)
    c.wait(1, 0)
    c.launch(1, "_Z8k_init2dPjPKjl", [P("u"), P("in2"), ("i64", h)],
             [("in2", "read"), ("u", "write")], grid=grid2, block=block2)
    c.launch(1, "_Z11k_stencil2dPjPKjl", [P("v"), P("u"), ("i64", h)],
             [("u", "read"), ("v", "write")], grid=grid2, block=block2)
    c.launch(1, "_Z10k_update2dPjPKjl", [P("u"), P("v"), ("i64", h)],
             [("v", "read"), ("u", "readwrite")], grid=grid2, block=block2)
    c.record(1, 1)
    for _ in range(2):
        c.launch(0, "_Z11k_stencil1dPjPKjm", [P("y"), P("x"), n64()],
                 [("x", "read"), ("y", "write")])
        c.launch(0, "_Z10k_update1dPjPKjm", [P("x"), P("y"), n64()],
                 [("y", "read"), ("x", "readwrite")])
    c.wait(0, 1)
    c.launch(0, "_Z7k_finalPjPKjS1_m", [P("out"), P("x"), P("u"), n64()],
             [("x", "read"), ("u", "read"), ("out", "write")])
    return c


# ---- planted bugs (README.md says what the checker must report) ------------

def bug_missing_wait():
    """s1 forks off s0 before s0 produces a, then reads a: the producer on s0
    and the consumer on s1 have no path between them (read after write)."""
    c = Capture("bug_missing_wait", 2, 2, 4201)
    for b in ("x", "a", "y", "out"):
        c.device_buffer(b)
    c.launch(0, "_Z6k_initPjm", [P("x"), n64()], [("x", "write")])
    c.record(0, 0)  # recorded too early: before the producer of a
    c.launch(0, "_Z9k_producePjPKjm", [P("a"), P("x"), n64()], [("x", "read"), ("a", "write")])
    c.wait(1, 0)
    c.launch(1, "_Z9k_consumePjPKjm", [P("y"), P("a"), n64()], [("a", "read"), ("y", "write")])
    c.record(1, 1)
    c.wait(0, 1)
    c.launch(0, "_Z5k_sumPjPKjS1_m", [P("out"), P("a"), P("y"), n64()],
             [("a", "read"), ("y", "read"), ("out", "write")])
    return c


def bug_free_before_use():
    """async_alloc without the wait before the free: s0 frees tmp while s1's
    read of tmp is unordered with the free (s1 joins only afterwards)."""
    c = Capture("bug_free_before_use", 2, 2, 4202)
    for b in ("x", "out1", "w", "out"):
        c.device_buffer(b)
    c.graph_buffer("tmp", GRAPH_POOL_BASE)
    c.malloc(0, "tmp")
    c.launch(0, "_Z6k_fillPjPKjm", [P("tmp"), P("x"), n64()], [("x", "read"), ("tmp", "write")])
    c.record(0, 0)
    c.wait(1, 0)
    c.launch(1, "_Z5k_usePjPKjm", [P("out1"), P("tmp"), n64()],
             [("tmp", "read"), ("out1", "write")])
    c.record(1, 1)
    c.launch(0, "_Z7k_otherPjPKjm", [P("w"), P("x"), n64()], [("x", "read"), ("w", "write")])
    c.free(0, "tmp")  # no wait for e1 first
    c.wait(0, 1)
    c.launch(0, "_Z5k_sumPjPKjS1_m", [P("out"), P("out1"), P("w"), n64()],
             [("out1", "read"), ("w", "read"), ("out", "write")])
    return c


def bug_reuse_across_streams():
    """tA is allocated, used and freed on s0 (correctly ordered there); s1,
    forked before tA existed, allocates tB at the same address range, so the
    two lifetimes overlap in time on the GPU: allocator reuse across streams."""
    c = Capture("bug_reuse_across_streams", 2, 2, 4203)
    for b in ("x", "out1", "out2", "out"):
        c.device_buffer(b)
    c.graph_buffer("tA", GRAPH_POOL_BASE)
    c.graph_buffer("tB", GRAPH_POOL_BASE)  # the same range as tA
    c.launch(0, "_Z6k_initPjm", [P("x"), n64()], [("x", "write")])
    c.record(0, 0)
    c.malloc(0, "tA")
    c.launch(0, "_Z6k_fillPjPKjm", [P("tA"), P("x"), n64()], [("x", "read"), ("tA", "write")])
    c.launch(0, "_Z5k_usePjPKjm", [P("out1"), P("tA"), n64()],
             [("tA", "read"), ("out1", "write")])
    c.free(0, "tA")
    c.wait(1, 0)
    c.malloc(1, "tB")
    c.launch(1, "_Z6k_fillPjPKjm", [P("tB"), P("x"), n64()], [("x", "read"), ("tB", "write")])
    c.launch(1, "_Z5k_usePjPKjm", [P("out2"), P("tB"), n64()],
             [("tB", "read"), ("out2", "write")])
    c.free(1, "tB")
    c.record(1, 1)
    c.wait(0, 1)
    c.launch(0, "_Z5k_sumPjPKjS1_m", [P("out"), P("out1"), P("out2"), n64()],
             [("out1", "read"), ("out2", "read"), ("out", "write")])
    return c


def bug_unjoined_fork():
    """s1 is forked from s0 and never joined back, yet s0's last kernel reads
    what s1 wrote (CUDA itself rejects this capture as unjoined; a pass that
    loses the join edge produces the same graph). The missing join is no
    hazard by itself (a launch ends when every node has); the reads of y it
    no longer orders are."""
    c = Capture("bug_unjoined_fork", 2, 1, 4204)
    for b in ("x", "y", "z"):
        c.device_buffer(b)
    c.launch(0, "_Z6k_initPjm", [P("x"), n64()], [("x", "write")])
    c.record(0, 0)
    c.wait(1, 0)
    c.launch(1, "_Z7k_scalePjPKjm", [P("y"), P("x"), n64()], [("x", "read"), ("y", "write")])
    c.launch(1, "_Z8k_squarePjm", [P("y"), n64()], [("y", "readwrite")])
    c.launch(0, "_Z7k_otherPjPKjm", [P("z"), P("y"), n64()], [("y", "read"), ("z", "write")])
    return c


def bug_waw_halves():
    """s0 writes the first three quarters of y and s1, forked before it,
    the last three: the middle half is written by both with no path between
    them (write after write on overlapping halves)."""
    c = Capture("bug_waw_halves", 2, 2, 4205)
    for b in ("x", "y", "out"):
        c.device_buffer(b)
    q = N // 4
    c.launch(0, "_Z6k_initPjm", [P("x"), n64()], [("x", "write")])
    c.record(0, 0)
    c.wait(1, 0)
    c.launch(0, "_Z7k_scalePjPKjm", [P("y"), P("x"), n64(3 * q)],
             [("x", "read", 0, 12 * q), ("y", "write", 0, 12 * q)])
    c.launch(1, "_Z7k_scalePjPKjm", [P("y", 4 * q), P("x"), n64(3 * q)],
             [("x", "read", 0, 12 * q), ("y", "write", 4 * q, 12 * q)])
    c.record(1, 1)
    c.wait(0, 1)
    c.launch(0, "_Z5k_sumPjPKjS1_m", [P("out"), P("y"), P("x"), n64()],
             [("y", "read"), ("x", "read"), ("out", "write")])
    return c


# ---- programs outside samples/ -----------------------------------------------

NCCL_ALLREDUCE = "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"
COMM_STATE = 0x7f4b80000000  # the communicator's device memory: in no buffer of the graph


def nccl_two_ranks():
    """Rank 1 of a two-rank NCCL program on its own GPU (device 1): the graph
    tests/gpu/nccl/nccl_allreduce.cu captures with two ranks. Compute on s0,
    the all_reduce on the comm stream s1 forked (e0) and joined (e1) by
    events, independent compute meanwhile. The NCCL kernel's argument is
    NCCL 2.28's 4 KiB ncclDevKernelArgsStorage: the communicator's device
    pointer, a channel mask, then the inline work (send and receive buffers,
    count); its reads and writes are what an exact analysis says."""
    c = Capture("nccl_allreduce", 2, 2, 4301)
    c.rank = 1
    c.ordinal = 1
    for b in ("x", "y", "z", "out"):
        c.device_buffer(b)
    c.launch(0, "_Z7producePfmi", [P("x"), n64(), ("i32", 1)], [("x", "write")])
    c.record(0, 0)
    c.wait(1, 0)
    args = struct.pack("<QQQQQ", COMM_STATE, 0x3, c.buffer_by_name["x"]["address"],
                       c.buffer_by_name["y"]["address"], N)
    c.launch(1, NCCL_ALLREDUCE, [("bytes", args + bytes(4096 - len(args)))],
             [("x", "read"), ("y", "write")], grid=(2, 1, 1), block=(512, 1, 1))
    c.record(1, 1)
    c.launch(0, "_Z5scalePfmf", [P("z"), n64(), ("f32", 0.5)], [("z", "write")])
    c.wait(0, 1)
    c.launch(0, "_Z7consumePKfS0_Pfm", [P("y"), P("z"), P("out"), n64()],
             [("y", "read"), ("z", "read"), ("out", "write")])
    return c


# Fixtures of programs that are not in samples/ (no samples/expected topology).
NOT_SAMPLES = {"nccl_two_ranks"}


# ---- an independent oracle for the hazard checker --------------------------

def hazards(doc):
    """Every hazard an exact checker must report, by brute force over the
    bundle: (kind, node, node, buffer label). Two nodes conflict when their
    byte ranges overlap (by address, so two buffers at one address conflict
    too) and one of them writes; a free conflicts with every access of its
    range. A conflict is a hazard when no path orders the two nodes (for a
    free: when the access does not reach the free). A stream that is not
    joined is no hazard by itself: a graph launch ends when every node has."""
    nodes = {n["id"]: n for n in doc["nodes"]}
    bufs = doc["buffers"]
    succ = {i: [] for i in nodes}
    for e in doc["edges"]:
        succ[e["from"]].append(e["to"])
    reach = {}
    for i in nodes:
        seen, stack = {i}, [i]
        while stack:
            for y in succ[stack.pop()]:
                if y not in seen:
                    seen.add(y)
                    stack.append(y)
        reach[i] = seen
    spans = []  # (node, lo, hi, writes, buffer label)
    for n in doc["nodes"]:
        for a in n.get("accesses", []):
            b = bufs[a["buffer"]]
            lo = int(b["address"], 16) + a["offset"]
            spans.append((n["id"], lo, lo + a["size"], a["mode"] != "read", b["label"]))
    found = set()
    for i, (na, la, ha, wa, ba) in enumerate(spans):
        for nb, lb, hb, wb, bb in spans[i + 1:]:
            if na == nb or ha <= lb or hb <= la or not (wa or wb):
                continue
            if nb not in reach[na] and na not in reach[nb]:
                found.add(("race", min(na, nb), max(na, nb), ba if na < nb else bb))
    for f in doc["nodes"]:
        if f["type"] != "mem_free":
            continue
        b = bufs[f["mem"]["buffer"]]
        lo = int(b["address"], 16)
        for na, la, ha, _, ba in spans:
            if ha > lo and la < lo + b["size"] and f["id"] not in reach[na]:
                found.add(("free_before_use", na, f["id"], ba))
    return sorted(found)


# What hazards() must find in each fixture (README.md explains each one).
EXPECTED_HAZARDS = {
    "bug_missing_wait": [("race", 1, 2, "a")],
    "bug_free_before_use": [("free_before_use", 2, 4, "tmp")],
    "bug_reuse_across_streams": [
        ("free_before_use", 2, 8, "tA"), ("free_before_use", 3, 8, "tA"),
        ("free_before_use", 6, 4, "tB"), ("free_before_use", 7, 4, "tB"),
        ("race", 2, 6, "tA"), ("race", 2, 7, "tA"), ("race", 3, 6, "tA")],
    "bug_unjoined_fork": [("race", 1, 3, "y"), ("race", 2, 3, "y")],
    "bug_waw_halves": [("race", 1, 2, "y")],
}


FIXTURES = {
    "fork_join": fork_join,
    "ping_pong": ping_pong,
    "pipeline3": lambda: pipeline(3, 4103, True),
    "pipeline4": lambda: pipeline(4, 4104, False),
    "diamond": diamond,
    "event_reuse": event_reuse,
    "two_waiters": two_waiters,
    "async_alloc": async_alloc,
    "chains": chains,
    "chain_barrier": chain_barrier,
    "stencil": stencil,
    "bug_missing_wait": bug_missing_wait,
    "bug_free_before_use": bug_free_before_use,
    "bug_reuse_across_streams": bug_reuse_across_streams,
    "bug_unjoined_fork": bug_unjoined_fork,
    "bug_waw_halves": bug_waw_halves,
    "nccl_two_ranks": nccl_two_ranks,
}


def main():
    check = "--check" in sys.argv[1:]
    samples_bin = os.environ.get("SGCAP_SAMPLES_BIN")
    bad = 0
    for name, make in FIXTURES.items():
        cap = make()
        doc = cap.bundle(crosscheck=not name.startswith("bug_"))
        text = to_json(doc)
        got = hazards(doc)
        if got != EXPECTED_HAZARDS.get(name, []):
            print("%s: hazards %s, expected %s" % (name, got, EXPECTED_HAZARDS.get(name, [])))
            bad += 1
        path = os.path.join(HERE, name + ".sgraph", "graph.json")
        code = doc["images"][0].get("file")
        code = os.path.join(HERE, name + ".sgraph", code) if code else None
        if check:
            try:
                with open(path) as f:
                    old = f.read()
            except OSError:
                old = None
            if old != text:
                print("%s: differs from what make_fixtures.py writes" % path)
                bad += 1
            try:
                same = code is None or open(code, "rb").read() == cap.code
            except OSError:
                same = False
            if not same:
                print("%s: missing, or not tests/golden/code's image" % code)
                bad += 1
            # the samples' reviewed topologies, and the built samples themselves
            topo = os.path.join(HERE, "..", "..", "samples", "expected", name + ".topo")
            if os.path.exists(topo):
                with open(topo) as f:
                    want = f.read()
                if want != cap.expect_text():
                    print("%s: topology differs from %s:\n%s\n---\n%s" % (
                        name, topo, want, cap.expect_text()))
                    bad += 1
            elif not name.startswith("bug_") and name not in NOT_SAMPLES:
                print("%s: no samples/expected/%s.topo to compare with" % (name, name))
                bad += 1
            exe = samples_bin and os.path.join(samples_bin, name)
            if exe and os.path.exists(exe):
                want = subprocess.run([exe, "--expect"], capture_output=True, text=True).stdout
                if want != cap.expect_text():
                    print("%s: topology differs from `%s --expect`:\n%s\n---\n%s" % (
                        name, name, want, cap.expect_text()))
                    bad += 1
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if code:
                os.makedirs(os.path.dirname(code), exist_ok=True)
                for old in os.listdir(os.path.dirname(code)):
                    os.remove(os.path.join(os.path.dirname(code), old))
                with open(code, "wb") as f:
                    f.write(cap.code)
            with open(path, "w") as f:
                f.write(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
