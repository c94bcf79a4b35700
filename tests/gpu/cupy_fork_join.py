"""CuPy fork/join CUDA graph capture, self-checking (tests/gpu, inject/).

Captures a fork/join graph on two non-blocking streams with
Stream.begin_capture/end_capture and events (record on the origin, wait on
the fork; record on the fork, wait on the origin), launches it on fresh
inputs and compares with NumPy. Exit 0 = OK, 1 = wrong result, 77 = no
CuPy/GPU here. Run unchanged under LD_PRELOAD=libsgcap.so.
"""
import sys

try:
    import cupy as cp
    import numpy as np
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"cupy_fork_join: skip: {e}")
    sys.exit(77)
try:
    if cp.cuda.runtime.getDeviceCount() < 1:
        raise RuntimeError("no CUDA device")
except Exception as e:  # noqa: BLE001 - any failure here means no GPU
    print(f"cupy_fork_join: skip: {e}")
    sys.exit(77)


def work(x, y, z, w, out, origin, fork, fork_ev, join_ev):
    # A node before the fork, so the fork's event edge exists in the graph
    # (an event recorded before any node of the capture orders nothing).
    with origin:
        cp.multiply(x, 2.0, out=y)       # origin stream
    fork_ev.record(origin)
    fork.wait_event(fork_ev)             # fork
    with fork:
        cp.add(y, 1.0, out=z)            # fork stream, reads y
    with origin:
        cp.multiply(x, 3.0, out=w)       # origin stream, concurrent with the fork
    join_ev.record(fork)
    origin.wait_event(join_ev)           # join
    with origin:
        cp.add(w, z, out=out)


def main():
    n = 1 << 20
    origin = cp.cuda.Stream(non_blocking=True)
    fork = cp.cuda.Stream(non_blocking=True)
    fork_ev = cp.cuda.Event(disable_timing=True)
    join_ev = cp.cuda.Event(disable_timing=True)
    x = cp.zeros(n, dtype=cp.float32)
    y = cp.empty_like(x)
    z = cp.empty_like(x)
    w = cp.empty_like(x)
    out = cp.empty_like(x)

    # Compile and load the kernels before capturing (no module loads inside).
    work(x, y, z, w, out, origin, fork, fork_ev, join_ev)
    origin.synchronize()

    origin.begin_capture()
    work(x, y, z, w, out, origin, fork, fork_ev, join_ev)
    graph = origin.end_capture()

    rng = np.random.default_rng(0)
    for _ in range(5):
        host = rng.standard_normal(n).astype(np.float32)
        x.set(host, stream=origin)
        graph.launch(stream=origin)
        origin.synchronize()
        got = out.get(stream=origin)
        origin.synchronize()
        ref = host * np.float32(3.0) + (host * np.float32(2.0) + np.float32(1.0))
        if not np.allclose(got, ref, rtol=1e-6, atol=1e-6):
            print("cupy_fork_join: FAIL (max error %g)" % np.abs(got - ref).max())
            return 1
    print("cupy_fork_join: OK (5 launches, 2 streams)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
