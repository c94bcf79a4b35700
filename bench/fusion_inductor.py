"""The fusion benchmark's peer (issue 12): PyTorch Inductor on the same
8-stage float32 pointwise chain as fusion_chain.cu (1.5x+2, x^2, sqrt(x+1),
clamp(0,50), -0.5x+1, x^2, sin, 3x-1) over the same number of elements.

Two forms, like fusion_chain: `dead` returns only the result (Inductor keeps
the intermediates in registers), `live` also returns every intermediate
(Inductor must store all eight). Each compiled function runs under
torch.compile(mode="max-autotune-no-cudagraphs") and is timed with CUDA events
around a CUDA graph of one call (so launch overhead does not count, as for
the graphs fusion_chain times), median of --launches. Prints one key=value
line per form. Exit 77 when torch or a GPU is missing.
"""
import argparse
import sys

try:
    import torch
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"fusion_inductor: skip: {e}")
    sys.exit(77)
if not torch.cuda.is_available():
    print("fusion_inductor: skip: no CUDA device")
    sys.exit(77)


def stages(x):
    a = 1.5 * x + 2.0
    b = a * a
    c = torch.sqrt(b + 1.0)
    d = torch.clamp(c, 0.0, 50.0)
    e = -0.5 * d + 1.0
    f = e * e
    g = torch.sin(f)
    h = 3.0 * g - 1.0
    return a, b, c, d, e, f, g, h


def dead(x):
    return stages(x)[-1]


def live(x):
    return stages(x)


def time_graph(fn, x, launches):
    for _ in range(3):
        fn(x)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn(x)
    g.replay()
    torch.cuda.synchronize()
    times = []
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(launches):
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0)
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--launches", type=int, default=50)
    args = ap.parse_args()
    x = torch.rand(args.n, device="cuda") * 8.0 - 4.0
    for name, fn, nbytes in (("dead", dead, 2), ("live", live, 9)):
        compiled = torch.compile(fn, mode="max-autotune-no-cudagraphs")
        us = time_graph(compiled, x, args.launches)
        eager_us = time_graph(fn, x, args.launches)
        b = nbytes * args.n * 4
        print(f"fusion_inductor mode={name} n={args.n} launches={args.launches} "
              f"inductor_median_us={us:.2f} eager_graph_median_us={eager_us:.2f} "
              f"min_bytes={b} gbs_at_min_bytes={b / (us * 1e3):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
