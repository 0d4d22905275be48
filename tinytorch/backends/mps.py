"""``torch.backends.mps``: Apple's Metal backend is not part of tinytorch (use the ``opencl`` device on a Mac)."""


def is_available():
    return False


def is_built():
    return False
