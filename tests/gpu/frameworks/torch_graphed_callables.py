"""torch.cuda.make_graphed_callables on a small MLP, forward and backward,
self-checking against the same module run eagerly (tests/gpu/frameworks).

Exit 0 = OK, 1 = wrong result, 77 = no torch/GPU here. Run unchanged under
LD_PRELOAD=libsgcap.so.
"""
import copy
import sys

try:
    import torch
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"torch_graphed_callables: skip: {e}")
    sys.exit(77)
if not torch.cuda.is_available():
    print("torch_graphed_callables: skip: no CUDA device")
    sys.exit(77)


def main():
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(),
                                torch.nn.Linear(512, 128)).cuda()
    eager = copy.deepcopy(model)
    sample = torch.randn(64, 256, device="cuda", requires_grad=True)
    graphed = torch.cuda.make_graphed_callables(model, (sample,))
    worst = 0.0
    for _ in range(5):
        x = torch.randn(64, 256, device="cuda")
        xg = x.clone().requires_grad_(True)
        xe = x.clone().requires_grad_(True)
        yg = graphed(xg)
        ye = eager(xe)
        yg.sum().backward()
        ye.sum().backward()
        torch.cuda.synchronize()
        worst = max(worst, (yg - ye).abs().max().item(), (xg.grad - xe.grad).abs().max().item())
        for pg, pe in zip(model.parameters(), eager.parameters()):
            worst = max(worst, (pg.grad - pe.grad).abs().max().item())
            pg.grad = None
            pe.grad = None
    if worst > 1e-4:
        print(f"torch_graphed_callables: FAIL (max error {worst:.3g})")
        return 1
    print(f"torch_graphed_callables: OK (5 steps forward+backward, max error {worst:.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
