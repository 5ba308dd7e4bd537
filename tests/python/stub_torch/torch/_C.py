_oom_observers = []


def _cuda_attach_out_of_memory_observer(fn):
    _oom_observers.append(fn)
