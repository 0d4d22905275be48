"""Fusion: chains of elementwise kernels become one generated kernel (filled in by the code generators)."""


def fuse(rec, kept, live):
    """The steps of a plan: node indices, or fused groups in their place."""
    return list(kept)
