"""A small FSDP2 training run with a DCP checkpoint: the capture kit's example (docs/capture.md).

The model is defined here (no downloads). Under torchrun it is an ordinary data-parallel job;
under the capture kit the same script plays one rank of a larger job on one GPU:

  torchrun --nproc-per-node 8 train_fsdp.py --ckpt /tmp/ck               # train, save, train
  python3 -m reservoir.capture --world-size 64 --rank 0 -- train_fsdp.py --ckpt /tmp/ck
  python3 -m reservoir.capture --world-size 64 --rank 0 -- train_fsdp.py --ckpt /tmp/ck --resume

Without --resume: trains --steps steps and saves a checkpoint after the first. With --resume:
loads the checkpoint and trains --steps steps. Peaks are reset before the last step.
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard


class Block(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim, bias=False)
        self.down = nn.Linear(4 * dim, dim, bias=False)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class Model(nn.Module):
    def __init__(self, vocab: int, dim: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim) for _ in range(layers))
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def build(args):
    torch.manual_seed(0)
    model = Model(args.vocab, args.dim, args.layers).cuda()
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model.blocks:
        fully_shard(block, mp_policy=policy)
    fully_shard(model, mp_policy=policy)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-4)


def step(model, optim, args, n: int) -> float:
    g = torch.Generator(device="cuda").manual_seed(n * 131 + dist.get_rank())
    tokens = torch.randint(0, args.vocab, (args.batch, args.seq + 1), device="cuda", generator=g)
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.float().flatten(0, 1), tokens[:, 1:].flatten())
    loss.backward()
    optim.step()
    optim.zero_grad(set_to_none=True)
    return loss.item()


def state(model, optim):
    m, o = get_state_dict(model, optim)
    return {"model": m, "optim": o}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--vocab", type=int, default=8192)
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--ckpt", default="/tmp/train_fsdp_ckpt")
    p.add_argument("--resume", action="store_true")
    args = p.parse_args()

    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    model, optim = build(args)
    if args.resume:
        sd = state(model, optim)
        dcp.load(sd, checkpoint_id=args.ckpt)
        set_state_dict(model, optim, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
    for n in range(1, args.steps + 1):
        if n == args.steps:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        loss = step(model, optim, args, n)
        if n == 1 and not args.resume:
            dcp.save(state(model, optim), checkpoint_id=args.ckpt)
        if dist.get_rank() == 0:
            print(f"step {n}: loss {loss:.4f}, peak reserved {torch.cuda.max_memory_reserved()} bytes")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
