"""torch.distributed (NCCL) inside a captured CUDA graph, one process per
GPU, self-checking (tests/gpu/frameworks, issue 15).

Each rank captures: compute on the current stream, all_reduce of its result
on a side stream forked and joined with events, more compute meanwhile,
then a consumer of the reduced tensor. The graph is replayed on fresh inputs
and compared with the exact sum. World size = number of visible GPUs (or
--world N). Keep NCCL_NVLS_ENABLE=0 (set here when unset). Exit 0 = OK,
1 = wrong result, 77 = no torch/GPU/NCCL here.
"""
import argparse
import os
import sys

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"torch_dist_allreduce: skip: {e}")
    sys.exit(77)
if not torch.cuda.is_available() or not dist.is_nccl_available():
    print("torch_dist_allreduce: skip: no CUDA device or no NCCL")
    sys.exit(77)


def rank_main(rank, world, port, result):
    os.environ["RANK"] = str(rank)
    os.environ["LOCAL_RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(world)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, device_id=torch.device("cuda", rank))
    n = 1 << 18
    x = torch.empty(n, device="cuda")
    y = torch.empty(n, device="cuda")
    out = torch.empty(n, device="cuda")
    side = torch.cuda.Stream()

    def step():
        cur = torch.cuda.current_stream()
        y.copy_(x * float(rank + 1))          # compute stream
        fork = torch.cuda.Event()
        fork.record(cur)
        with torch.cuda.stream(side):
            side.wait_event(fork)
            dist.all_reduce(y)               # comm stream
            join = torch.cuda.Event()
            join.record(side)
        z = torch.cos(x)                     # overlaps the collective
        cur.wait_event(join)
        out.copy_(y + z)

    x.copy_(torch.arange(n, device="cuda", dtype=torch.float32) % 11)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    worst = 0.0
    scale = world * (world + 1) / 2.0
    for i in range(3):
        x.copy_((torch.arange(n, device="cuda", dtype=torch.float32) + i) % 13)
        g.replay()
        torch.cuda.synchronize()
        want = x * scale + torch.cos(x)
        worst = max(worst, (out - want).abs().max().item())
    dist.barrier()
    dist.destroy_process_group()
    result[rank] = worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--world", type=int, default=torch.cuda.device_count())
    args = ap.parse_args()
    world = max(1, min(args.world, torch.cuda.device_count()))
    port = 29500 + os.getpid() % 1000
    ctx = mp.get_context("spawn")
    result = ctx.Manager().dict()
    mp.start_processes(rank_main, args=(world, port, result), nprocs=world, start_method="spawn")
    worst = max(result.values()) if len(result) == world else float("inf")
    ok = worst <= 1e-5
    print(f"torch_dist_allreduce: {'OK' if ok else 'FAIL'} ({world} rank{'s' if world > 1 else ''}, "
          f"3 replays, max error {worst:.3g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
