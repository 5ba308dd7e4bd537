"""The stub c10d: one default group; object collectives on a fake group return garbage (as the
real ones do: the fake group never fills the received tensors)."""

import pickle

_registered = {"nccl", "gloo"}
_group = None
calls = []


class _Group:
    def __init__(self, backend, rank, world_size, store):
        self.backend, self.rank, self.world_size, self.store = backend, rank, world_size, store


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    global _group
    if _group is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend not in _registered:
        raise ValueError(f"Invalid backend: '{backend}'")
    if backend == "nccl":
        raise RuntimeError("stub: a real NCCL group cannot be created here")
    calls.append({"backend": backend, "rank": rank, "world_size": world_size, "store": type(store).__name__,
                  "timeout": timeout})
    _group = _Group(backend, rank, world_size, store)


def is_initialized():
    return _group is not None


def destroy_process_group(group=None):
    global _group
    _group = None


def get_rank(group=None):
    return _group.rank


def get_world_size(group=None):
    return _group.world_size


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, **kw):
    if backend not in (None, "fake"):
        raise RuntimeError(f"stub: backend {backend} cannot be created here")
    return _group


def barrier(group=None):
    pass


def _garbage(*args, **kwargs):
    raise pickle.UnpicklingError("invalid load key, '\\x00'.")


all_gather_object = gather_object = broadcast_object_list = scatter_object_list = _garbage
