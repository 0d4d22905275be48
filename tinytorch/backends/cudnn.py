"""``torch.backends.cudnn``: cuDNN is not part of tinytorch. ``is_available()`` is False and the flags
(``enabled``, ``benchmark``, ``deterministic``, ``allow_tf32``) are plain attributes that change nothing,
as on a CPU-only PyTorch build."""
enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
