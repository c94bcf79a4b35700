"""PyTorch two-stream capture where each stream writes its own tensor from a
shared input (tests/gpu/frameworks). A correct program: `sgcap check` must
find no proven hazard in its bundle.

Exit 0 = OK, 1 = wrong result, 77 = no torch/GPU here.
"""
import sys

try:
    import torch
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"torch_shared_input: skip: {e}")
    sys.exit(77)
if not torch.cuda.is_available():
    print("torch_shared_input: skip: no CUDA device")
    sys.exit(77)


def main():
    torch.manual_seed(0)
    n = 1 << 20
    x = torch.randn(n, device="cuda")
    a = torch.empty_like(x)
    b = torch.empty_like(x)
    side = torch.cuda.Stream()
    torch.mul(x, 2.0, out=a)          # warm-up: load the kernels outside the capture
    torch.add(x, 1.0, out=b)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        main_s = torch.cuda.current_stream()
        side.wait_stream(main_s)
        torch.mul(x, 2.0, out=a)       # main stream writes a
        with torch.cuda.stream(side):
            torch.add(x, 1.0, out=b)   # side stream writes b, both read x
        main_s.wait_stream(side)
    worst = 0.0
    for _ in range(3):
        x.copy_(torch.randn(n, device="cuda"))
        g.replay()
        torch.cuda.synchronize()
        worst = max(worst, (a - x * 2.0).abs().max().item(), (b - (x + 1.0)).abs().max().item())
    if worst > 0:
        print(f"torch_shared_input: FAIL (max error {worst:.3g})")
        return 1
    print("torch_shared_input: OK (3 replays, 2 streams, shared input)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
