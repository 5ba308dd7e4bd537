class Parameter:
    def __init__(self, shape, dtype, requires_grad=True):
        self.shape, self.dtype, self.requires_grad = tuple(shape), dtype, requires_grad


class Module:
    def __init__(self, **children):
        self._params = {}
        self._children = dict(children)

    def _all_params(self):
        for c in self._children.values():
            yield from c._all_params()
        for n, p in self._params.items():
            yield self, n, p

    def named_modules(self, prefix=""):
        yield prefix, self
        for n, c in self._children.items():
            yield from c.named_modules(f"{prefix}.{n}" if prefix else n)

    def named_parameters(self, prefix=""):
        for n, p in self._params.items():
            yield (f"{prefix}.{n}" if prefix else n), p
        for n, c in self._children.items():
            yield from c.named_parameters(f"{prefix}.{n}" if prefix else n)


class Linear(Module):
    def __init__(self, i, o, dtype=None):
        super().__init__()
        from .. import float32

        self._params["weight"] = Parameter((o, i), dtype or float32)
