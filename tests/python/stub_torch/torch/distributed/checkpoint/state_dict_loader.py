import json
import os
import warnings

from .. import distributed_c10d

calls = []


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None, process_group=None, no_dist=False):
    calls.append({"no_dist": no_dist})
    if no_dist:  # as torch words it
        warnings.warn("torch.distributed is disabled, unavailable or uninitialized, assuming the intent is to load "
                      "in a single process.")
    else:
        distributed_c10d.broadcast_object_list([None])  # garbage on a fake group
    with open(os.path.join(checkpoint_id, ".metadata")) as f:
        keys = json.load(f)
    missing = [k for k in state_dict if k not in keys]
    if missing:
        raise RuntimeError(f"Missing key in checkpoint state_dict: {missing[0]}.")
