"""The op declarations, one module per family (``pointwise``, ``reduce``, ``creation`` ...)."""
