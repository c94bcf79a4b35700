"""PyTorch two-stream CUDA graph capture, self-checking (tests/gpu, inject/).

Captures torch.cuda.graph with a side stream forked from and joined back to
the capture stream (wait_stream), replays it on fresh inputs and compares
with eager PyTorch. Exit 0 = OK, 1 = wrong result, 77 = no torch/GPU here.
Run unchanged under LD_PRELOAD=libsgcap.so; its trace must show the capture.
"""
import sys

try:
    import torch
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"torch_two_stream: skip: {e}")
    sys.exit(77)
if not torch.cuda.is_available():
    print("torch_two_stream: skip: no CUDA device")
    sys.exit(77)


def step(x, side):
    main = torch.cuda.current_stream()
    a = x * 2.0                      # main stream
    side.wait_stream(main)           # fork: event record on main, wait on side
    with torch.cuda.stream(side):
        b = torch.cos(x) + 1.0       # side stream, concurrent with c
    c = torch.sin(a)                 # main stream
    main.wait_stream(side)           # join
    return c * b


def main():
    torch.manual_seed(0)
    n = 1 << 20
    static_x = torch.randn(n, device="cuda")
    side = torch.cuda.Stream()

    warm = torch.cuda.Stream()       # warm up outside the capture, as documented
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for _ in range(3):
            step(static_x, side)
    torch.cuda.current_stream().wait_stream(warm)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = step(static_x, side)

    worst = 0.0
    for i in range(5):
        fresh = torch.randn(n, device="cuda")
        static_x.copy_(fresh)
        graph.replay()
        torch.cuda.synchronize()
        ref = torch.sin(fresh * 2.0) * (torch.cos(fresh) + 1.0)
        worst = max(worst, (static_out - ref).abs().max().item())
    if worst > 1e-5:
        print(f"torch_two_stream: FAIL (max error {worst:g})")
        return 1
    print("torch_two_stream: OK (5 replays, 2 streams)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
