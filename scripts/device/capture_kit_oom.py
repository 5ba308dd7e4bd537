"""The capture kit's OOM paths on a GPU: an out-of-memory the program catches (context manager,
ring buffer) and one it does not (under `python3 -m reservoir.capture`, with --uncaught)."""
import sys

import torch

import reservoir


def fill():
    torch.cuda.set_per_process_memory_fraction(0.02)
    xs = []
    while True:
        xs.append(torch.empty(256 << 20, dtype=torch.uint8, device="cuda"))


if "--uncaught" in sys.argv:
    torch.cuda.set_device(0)
    fill()
else:
    with reservoir.capture(sys.argv[1], max_entries=100000):
        try:
            fill()
        except torch.cuda.OutOfMemoryError:
            pass  # caught: the program goes on
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        y = torch.empty(1 << 20, device="cuda")
        del y
