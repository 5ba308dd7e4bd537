"""Capture a trace whose window starts while a CUDA-graph private pool still holds segments
(issue: `check` reports a layout mismatch there). One process: capture a CUDA graph of a small
MLP, replay it a few times, drop the graph, turn history off and on again, train a few ordinary
steps, dump the snapshot.

  python3 graph_pool.py --out DIR --tag graph-pool
"""
import argparse, json, os, pickle

import torch
import torch.nn as nn


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--tag", default="graph-pool")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512)).cuda()
    optim = torch.optim.SGD(model.parameters(), lr=1e-3)
    static_x = torch.randn(64, 512, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            model(static_x).sum().backward()
    torch.cuda.current_stream().wait_stream(s)
    optim.zero_grad(set_to_none=True)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_y = model(static_x)
    for _ in range(3):
        static_x.copy_(torch.randn(64, 512, device="cuda"))
        g.replay()
    del g
    torch.cuda.memory._record_memory_history(enabled=None)
    torch.cuda.memory._record_memory_history(max_entries=100_000, stacks="python")
    for _ in range(3):
        x = torch.randn(64, 512, device="cuda")
        model(x).square().mean().backward()
        optim.step()
        optim.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    stem = os.path.join(args.out, args.tag)
    with open(stem + ".pickle", "wb") as f:
        pickle.dump(torch.cuda.memory._snapshot(), f)
    with open(stem + ".json", "w") as f:
        json.dump({"tag": args.tag, "torch": torch.__version__, "memory_stats": dict(torch.cuda.memory_stats())}, f, indent=1)
    del static_y


if __name__ == "__main__":
    main()
