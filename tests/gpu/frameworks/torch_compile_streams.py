"""torch.compile(mode="reduce-overhead") with and without user streams,
self-checking (tests/gpu/frameworks).

Three compiled functions, each called enough times for CUDA-graph trees to
record and replay a graph:
  plain   - a pointwise chain on the current stream;
  streams - a side stream forked with wait_stream, joined with wait_stream
            (the seeds' user-streams feature);
  events  - a side stream joined through an explicit torch.cuda.Event.
Each result is compared with eager PyTorch on fresh inputs. Exit 0 = OK,
1 = wrong result, 77 = no torch/GPU here. A function that torch.compile
cannot compile in this PyTorch is reported (and fails the run): the program
must behave the same with and without the shim.
Run unchanged under LD_PRELOAD=libsgcap.so.
"""
import sys

try:
    import torch
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"torch_compile_streams: skip: {e}")
    sys.exit(77)
if not torch.cuda.is_available():
    print("torch_compile_streams: skip: no CUDA device")
    sys.exit(77)

side = None


def plain(x, y):
    return torch.sin(x) * y + torch.cos(y) * 0.5


def streams(x):
    cur = torch.cuda.current_stream()
    a = x * 2.0
    side.wait_stream(cur)
    with torch.cuda.stream(side):
        b = torch.cos(x) + 1.0
    c = torch.sin(a)
    cur.wait_stream(side)
    return c * b


def events(x):
    cur = torch.cuda.current_stream()
    ev_fork = torch.cuda.Event()
    ev_join = torch.cuda.Event()
    a = x + 3.0
    ev_fork.record(cur)
    with torch.cuda.stream(side):
        side.wait_event(ev_fork)
        b = a * a
        ev_join.record(side)
    cur.wait_event(ev_join)
    return b - a


def check(name, fn, ref, make_inputs, calls=6):
    compiled = torch.compile(fn, mode="reduce-overhead")
    worst = 0.0
    for _ in range(calls):
        args = make_inputs()
        got = compiled(*args).clone()
        torch.cuda.synchronize()
        want = ref(*args)
        worst = max(worst, (got - want).abs().max().item())
    ok = worst <= 1e-5
    print(f"torch_compile_streams: {name}: {'OK' if ok else 'FAIL'} ({calls} calls, max error {worst:.3g})")
    return ok


def main():
    global side
    torch.manual_seed(0)
    side = torch.cuda.Stream()
    n = 1 << 20
    ok = True
    ok &= check("plain", plain, plain,
                lambda: (torch.randn(n, device="cuda"), torch.randn(n, device="cuda")))
    for name, fn in (("streams", streams), ("events", events)):
        try:
            ok &= check(name, fn, fn, lambda: (torch.randn(n, device="cuda"),))
        except Exception as e:  # noqa: BLE001 - report what this PyTorch cannot compile
            print(f"torch_compile_streams: {name}: FAIL: torch.compile raised "
                  f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
