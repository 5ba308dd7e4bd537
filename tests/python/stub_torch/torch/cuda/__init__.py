from . import memory
from .memory import (OutOfMemoryError, get_per_process_memory_fraction, mem_get_info, memory_stats,  # noqa: F401
                     reset_peak_memory_stats, set_per_process_memory_fraction)

_device = 0


def is_available():
    return True


def current_device():
    return _device


def set_device(d):
    global _device
    _device = int(d)


def get_device_name(d=None):
    return "Stub GPU"


def init():
    pass


def synchronize(d=None):
    pass


def empty_cache():
    memory._state["reserved"] = memory._state["allocated"]


_stub_alloc = memory._stub_alloc
_stub_free = memory._stub_free
_stub_oom = memory._stub_oom
