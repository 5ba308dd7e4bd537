"""The stub's torch.optim.optimizer: an Optimizer whose step() runs the global post-hooks."""

_post_hooks = {}


class _Handle:
    def __init__(self, key):
        self.key = key

    def remove(self):
        _post_hooks.pop(self.key, None)


def register_optimizer_step_post_hook(hook):
    key = object()
    _post_hooks[key] = hook
    return _Handle(key)


class Optimizer:
    def step(self, *args, **kwargs):
        for hook in list(_post_hooks.values()):
            hook(self, args, kwargs)
