"""Record small traces that use private pools, for the torch backend's pool replay and as
regression traces for the model (tests/data/traces/pools/). One workload per process, history
recorded from the process's first CUDA allocation (no ring buffer, no start state), the pools
still alive at the dump (their segments are in the snapshot):

  mempool  a training loop with a torch.cuda.MemPool beside it: a growing cache, scratch
           tensors freed inside the pool, a pool tensor used on a side stream and freed with
           record_stream, one freed outside the pool's context, an empty_cache midway.
  graph    a CUDA graph of an MLP's forward and backward (torch.cuda.graph, warm-up on a side
           stream), replayed; a second graph captured into the same pool; eager steps after.
  graph-released
           the same, then both graphs dropped and empty_cache (the pool's segments are
           released before the dump), then eager steps.
  graph-released-mid
           a graph captured and replayed, eager steps and an empty_cache while it is alive
           (its pool keeps its segments), a second capture into the same pool, then both
           dropped, empty_cache, and eager steps that reuse the freed addresses.
  mempool-released
           a MemPool used by a few steps, then dropped with its tensors and empty_cache (its
           segments are released before the dump), then eager steps.
  mempool-gone, graph-gone
           the same with nothing of the pool left at the dump: the model warmed up outside the
           pool, cuBLAS's per-stream workspaces (which a first matmul in a pool or a capture
           allocates there) cleared before the empty_cache, so the snapshot shows no segment of
           the pool at all.

  python3 pool_workloads.py --out DIR --workload mempool --tag pool-mempool
Writes DIR/TAG.pickle and DIR/TAG.json (memory_stats() at the dump, the device's total memory,
the settings), as the capture scripts do.
"""
import argparse
import json
import os
import pickle

import torch
import torch.nn as nn

MiB = 2**20


def mlp(d_in, d_hidden):
    return nn.Sequential(nn.Linear(d_in, d_hidden), nn.GELU(), nn.Linear(d_hidden, d_in)).cuda()


def mempool_workload(steps=6):
    model = mlp(1024, 4096)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    pool = torch.cuda.MemPool()
    side = torch.cuda.Stream()
    cache = []
    for step in range(steps):
        x = torch.randn(512, 1024, device="cuda")
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.use_mem_pool(pool):
            cache.append(torch.empty((step + 1) * 3 * MiB, dtype=torch.uint8, device="cuda"))
            cache.append(torch.empty(4096 * (step + 1), device="cuda"))
            scratch = torch.randn(2048, 2048, device="cuda")
            y = model(x[:64])
        del scratch, y  # freed inside the pool
        with torch.cuda.use_mem_pool(pool):
            shared = torch.empty(8 * MiB, dtype=torch.uint8, device="cuda")
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            shared.add_(1)
        shared.record_stream(side)
        del shared  # completes when the side stream's work does
        if step % 2 == 1:
            del cache[0]  # a pool block freed outside the pool's context
        if step == 3:
            torch.cuda.empty_cache()  # the pool is alive: its segments stay
    torch.cuda.synchronize()
    return [pool, model, opt, cache]


def captured_step(model, x, warmups):
    """Warm-up steps on a side stream, then a CUDA graph of a forward and backward."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warmups):
            model(x).square().mean().backward()
    torch.cuda.current_stream().wait_stream(s)
    for p in model.parameters():
        p.grad = None
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        loss = model(x).square().mean()
        loss.backward()
    return g, loss


def replayed_graph():
    """A model, a graph of its training step in the graph's own pool, replayed three times."""
    model = mlp(512, 2048)
    static_x = torch.randn(64, 512, device="cuda")
    g, static_loss = captured_step(model, static_x, 3)
    for _ in range(3):
        static_x.copy_(torch.randn(64, 512, device="cuda"))
        g.replay()
    return model, static_x, g, static_loss


def graph_workload(release):
    model, static_x, g, static_loss = replayed_graph()
    g2 = torch.cuda.CUDAGraph()
    static_x2 = torch.randn(32, 512, device="cuda")
    with torch.no_grad(), torch.cuda.graph(g2, pool=g.pool()):
        static_y2 = model(static_x2)
    g2.replay()
    keep = [model, g, g2, static_x, static_loss, static_x2, static_y2]
    if release:
        del keep[1:], g, g2, static_loss, static_y2
        for p in model.parameters():
            p.grad = None  # captured into the graph's pool
        torch.cuda.synchronize()
        torch.cuda.empty_cache()  # the pool is freeable now: its segments go back
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for _ in range(3):
        x = torch.randn(128, 512, device="cuda")
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=False)  # graph: the grads stay in the graph's pool
    torch.cuda.empty_cache()
    torch.cuda.synchronize()
    return keep + [opt]


def graph_released_mid_workload():
    model = mlp(768, 3072)
    x = torch.randn(96, 768, device="cuda")
    g, loss = captured_step(model, x, 2)
    g.replay()
    grads = [p.grad for p in model.parameters()]
    for p in model.parameters():
        p.grad = None
    for _ in range(2):  # eager steps beside the live graph
        y = torch.randn(200, 768, device="cuda")
        model(y).square().mean().backward()
        for p in model.parameters():
            p.grad = None
    del y
    torch.cuda.empty_cache()  # the graph is alive: its pool keeps its segments
    g2 = torch.cuda.CUDAGraph()
    x2 = torch.randn(48, 768, device="cuda")
    with torch.no_grad(), torch.cuda.graph(g2, pool=g.pool()):
        out2 = model(x2) * 2
    g2.replay()
    del g, g2, loss, out2, grads
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    for _ in range(3):
        y = torch.randn(160, 768, device="cuda")
        model(y).square().mean().backward()
        for p in model.parameters():
            p.grad = None
    return [model, x, x2]


def clear_cublas_workspaces():
    clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear is not None:
        clear()


def mempool_released_workload(gone=False):
    """gone: nothing of the pool left at the dump (cuBLAS set up outside it, its workspaces cleared)."""
    model = mlp(1024, 4096)
    if gone:
        model(torch.randn(8, 1024, device="cuda")).square().mean().backward()
        for p in model.parameters():
            p.grad = None
    pool = torch.cuda.MemPool()
    kept = []
    for step in range(3):
        x = torch.randn(256, 1024, device="cuda")
        with torch.cuda.use_mem_pool(pool):
            kept.append(torch.empty((step + 2) * MiB, dtype=torch.uint8, device="cuda"))
            t = torch.randn(1024, 1024, device="cuda")
            y = model(x)
        del t, y
        model(x).square().mean().backward()
    del kept, pool
    torch.cuda.synchronize()
    if gone:
        clear_cublas_workspaces()
    torch.cuda.empty_cache()
    for _ in range(3):
        x = torch.randn(300, 1024, device="cuda")
        model(x).square().mean().backward()
    return [model]


def graph_gone_workload():
    model, static_x, g, static_loss = replayed_graph()
    del g, static_loss, static_x
    for p in model.parameters():
        p.grad = None  # captured into the graph's pool
    torch.cuda.synchronize()
    clear_cublas_workspaces()
    torch.cuda.empty_cache()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for _ in range(3):
        x = torch.randn(128, 512, device="cuda")
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=False)
    torch.cuda.synchronize()
    return [model, opt]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--workload", choices=["mempool", "graph", "graph-released", "graph-released-mid", "mempool-released",
                                                "mempool-gone", "graph-gone"], required=True)
    p.add_argument("--tag", required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    torch.cuda.memory._record_memory_history(max_entries=200_000, stacks="python")
    if args.workload == "mempool":
        alive = mempool_workload()
    elif args.workload == "graph-released-mid":
        alive = graph_released_mid_workload()
    elif args.workload == "mempool-released":
        alive = mempool_released_workload()
    elif args.workload == "mempool-gone":
        alive = mempool_released_workload(gone=True)
    elif args.workload == "graph-gone":
        alive = graph_gone_workload()
    else:
        alive = graph_workload(release=args.workload == "graph-released")
    torch.cuda.synchronize()
    stem = os.path.join(args.out, args.tag)
    with open(stem + ".pickle", "wb") as f:
        pickle.dump(torch.cuda.memory._snapshot(), f)
    facts = {
        "tag": args.tag,
        "workload": args.workload,
        "torch": torch.__version__,
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        "device_total": torch.cuda.mem_get_info()[1],
        "memory_stats": dict(torch.cuda.memory_stats()),
    }
    with open(stem + ".json", "w") as f:
        json.dump(facts, f, indent=1)
    print(f"{args.tag}: {len(alive)} objects kept alive to the dump; "
          f"reserved {torch.cuda.memory_reserved()} allocated {torch.cuda.memory_allocated()}")


if __name__ == "__main__":
    main()
