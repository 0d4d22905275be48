"""``torch.backends.mkldnn``: oneDNN is not part of tinytorch (the ``cpu`` backend is NumPy)."""
enabled = True
deterministic = False


def is_available():
    return False
