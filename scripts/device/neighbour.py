"""A neighbour process on the same GPU (scripts/device/record_real_libs.sh): allocates and frees
tensors of random sizes (up to --max-gib in all) until it is killed or --seconds pass, so that
the recorded job shares the device as it does on a busy node."""
import argparse
import random
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--seconds", type=float, default=600)
p.add_argument("--max-gib", type=float, default=24)
a = p.parse_args()
rng = random.Random(7)
held, total, end = [], 0, time.time() + a.seconds
while time.time() < end:
    size = rng.choice([2, 20, 64, 200, 600, 1500]) << 20
    if total + size > a.max_gib * (1 << 30) or (held and rng.random() < 0.4):
        t = held.pop(rng.randrange(len(held)))
        total -= t.numel()
        del t
        if rng.random() < 0.2:
            torch.cuda.empty_cache()
    else:
        held.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
        total += size
    time.sleep(0.01)
