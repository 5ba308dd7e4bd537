"""Capture a save -> offload -> wake-up trace (the RL case: a trainer offloads to the CPU so that
an inference engine can wake up on the same GPU).

A small MLP trains a few steps with AdamW, writes a checkpoint with torch.save, moves the model
and the optimizer state to the CPU (`offload`), optionally releases the allocator cache
(`--cleanup`: gc.collect(); torch.cuda.empty_cache() right after offload returns), and then asks
the CUDA driver, outside PyTorch's cache, how much it could still hand another process.

  python3 offload.py --out DIR --tag offload-main
  python3 offload.py --out DIR --tag offload-cleanup --cleanup
Writes DIR/<tag>.pickle (the snapshot, recorded from process start) and DIR/<tag>.json: reserved
and allocated bytes just after offload (before any cleanup) and after the cleanup point, the
device's free/total memory there, and memory_stats() at the end.
"""
import argparse, gc, json, os, pickle

import torch
import torch.nn as nn


def train(model, optim, steps, batch, dim):
    for step in range(steps):
        x = torch.randn(batch, dim, device="cuda")
        loss = model(x).square().mean()
        loss.backward()
        optim.step()
        optim.zero_grad(set_to_none=True)


def save(model, optim, path):
    torch.save({"model": model.state_dict(), "optim": optim.state_dict()}, path)


def offload(model, optim):
    model.to("cpu")
    for state in optim.state.values():
        for k, v in state.items():
            if torch.is_tensor(v):
                state[k] = v.to("cpu")
    torch.cuda.synchronize()


def figures_now():
    free, total = torch.cuda.mem_get_info()
    return {"reserved": torch.cuda.memory_reserved(), "allocated": torch.cuda.memory_allocated(),
            "device_free": free, "device_total": total}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--tag", default="offload-main")
    p.add_argument("--cleanup", action="store_true")
    p.add_argument("--dim", type=int, default=2048)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--steps", type=int, default=3)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    torch.cuda.memory._record_memory_history(max_entries=1_000_000, stacks="python")
    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.dim, 4 * args.dim), nn.GELU(), nn.Linear(4 * args.dim, args.dim)]
    model = nn.Sequential(*layers).cuda()
    optim = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train(model, optim, args.steps, args.batch, args.dim)
    save(model, optim, os.path.join(args.out, f"{args.tag}.ckpt.pt"))
    offload(model, optim)
    figures = {"after_offload": figures_now()}
    if args.cleanup:
        gc.collect()
        torch.cuda.empty_cache()
    figures["wake_up"] = figures_now()
    stem = os.path.join(args.out, args.tag)
    with open(stem + ".pickle", "wb") as f:
        pickle.dump(torch.cuda.memory._snapshot(), f)
    figures.update({"tag": args.tag, "cleanup": args.cleanup, "torch": torch.__version__,
                    "config": {k: getattr(args, k) for k in ("dim", "layers", "batch", "steps")},
                    "memory_stats": dict(torch.cuda.memory_stats())})
    with open(stem + ".json", "w") as f:
        json.dump(figures, f, indent=1)
    os.remove(os.path.join(args.out, f"{args.tag}.ckpt.pt"))
    torch.cuda.memory._record_memory_history(enabled=None)


if __name__ == "__main__":
    main()
