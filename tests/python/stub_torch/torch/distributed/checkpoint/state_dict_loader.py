import json
import os

from .. import distributed_c10d

calls = []


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None, process_group=None, no_dist=False):
    calls.append({"no_dist": no_dist})
    if not no_dist:
        distributed_c10d.broadcast_object_list([None])  # garbage on a fake group
    with open(os.path.join(checkpoint_id, ".metadata")) as f:
        keys = json.load(f)
    missing = [k for k in state_dict if k not in keys]
    if missing:
        raise RuntimeError(f"Missing key in checkpoint state_dict: {missing[0]}.")
