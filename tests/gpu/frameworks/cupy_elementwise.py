"""CuPy ElementwiseKernels in CUDA graphs, self-checking against NumPy
(tests/gpu/frameworks).

Two graphs:
  fork_join - two user ElementwiseKernels on two streams, each writing its
              own array from a shared input, joined by events (a correct
              program: no proven hazard);
  chain     - eight ElementwiseKernels in a row on one stream, the fusion
              chain (1.5x+2, x^2, sqrt(x+1), clamp(0,50), -0.5x+1, x^2,
              sin, 3x-1), every intermediate in its own array.
Exit 0 = OK, 1 = wrong result, 77 = no CuPy/GPU here.
"""
import sys

try:
    import cupy as cp
    import numpy as np
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"cupy_elementwise: skip: {e}")
    sys.exit(77)
try:
    if cp.cuda.runtime.getDeviceCount() < 1:
        raise RuntimeError("no CUDA device")
except Exception as e:  # noqa: BLE001 - any failure here means no GPU
    print(f"cupy_elementwise: skip: {e}")
    sys.exit(77)

STAGES = [
    ("y = 1.5f * x + 2.0f", lambda x: np.float32(1.5) * x + np.float32(2.0)),
    ("y = x * x", lambda x: x * x),
    ("y = sqrtf(x + 1.0f)", lambda x: np.sqrt(x + np.float32(1.0))),
    ("y = fminf(fmaxf(x, 0.0f), 50.0f)", lambda x: np.minimum(np.maximum(x, np.float32(0)), np.float32(50))),
    ("y = -0.5f * x + 1.0f", lambda x: np.float32(-0.5) * x + np.float32(1.0)),
    ("y = x * x", lambda x: x * x),
    ("y = sinf(x)", np.sin),
    ("y = 3.0f * x - 1.0f", lambda x: np.float32(3.0) * x - np.float32(1.0)),
]


def fork_join(n):
    scale = cp.ElementwiseKernel("float32 x", "float32 y", "y = x * 2.0f", "sg_scale")
    shift = cp.ElementwiseKernel("float32 x", "float32 y", "y = x + 1.0f", "sg_shift")
    origin = cp.cuda.Stream(non_blocking=True)
    fork = cp.cuda.Stream(non_blocking=True)
    ev_fork = cp.cuda.Event(disable_timing=True)
    ev_join = cp.cuda.Event(disable_timing=True)
    x = cp.zeros(n, dtype=cp.float32)
    a = cp.empty_like(x)
    b = cp.empty_like(x)
    out = cp.empty_like(x)

    def work():
        with origin:
            cp.multiply(x, 1.0, out=out)  # a node before the fork: the fork edge exists
        ev_fork.record(origin)
        fork.wait_event(ev_fork)
        with origin:
            scale(x, a)
        with fork:
            shift(x, b)
        ev_join.record(fork)
        origin.wait_event(ev_join)

    work()
    origin.synchronize()
    origin.begin_capture()
    work()
    graph = origin.end_capture()
    rng = np.random.default_rng(1)
    for _ in range(3):
        host = rng.standard_normal(n).astype(np.float32)
        x.set(host, stream=origin)
        graph.launch(stream=origin)
        origin.synchronize()
        if not (np.array_equal(a.get(), host * np.float32(2)) and
                np.array_equal(b.get(), host + np.float32(1))):
            return False
    return True


def chain(n):
    kernels = [cp.ElementwiseKernel("float32 x", "float32 y", body, "sg_stage%d" % i)
               for i, (body, _) in enumerate(STAGES)]
    s = cp.cuda.Stream(non_blocking=True)
    bufs = [cp.zeros(n, dtype=cp.float32) for _ in range(len(STAGES) + 1)]

    def work():
        with s:
            for i, k in enumerate(kernels):
                k(bufs[i], bufs[i + 1])

    work()
    s.synchronize()
    s.begin_capture()
    work()
    graph = s.end_capture()
    rng = np.random.default_rng(2)
    for _ in range(3):
        host = rng.standard_normal(n).astype(np.float32)
        bufs[0].set(host, stream=s)
        graph.launch(stream=s)
        s.synchronize()
        want = host
        for _, f in STAGES:
            want = f(want).astype(np.float32)
        got = bufs[-1].get()
        if not np.allclose(got, want, rtol=1e-5, atol=1e-5):
            print("cupy_elementwise: chain max error %g" % np.abs(got - want).max())
            return False
    return True


def main():
    n = 1 << 20
    ok_fj = fork_join(n)
    ok_ch = chain(n)
    print(f"cupy_elementwise: fork_join {'OK' if ok_fj else 'FAIL'}, chain {'OK' if ok_ch else 'FAIL'}")
    return 0 if ok_fj and ok_ch else 1


if __name__ == "__main__":
    sys.exit(main())
