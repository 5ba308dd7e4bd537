"""The kit's own error: something it cannot emulate or a wrong use; the message says what."""


class CaptureError(RuntimeError):
    pass
