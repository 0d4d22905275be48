"""The op declarations (one module per family: ``pointwise``, ``reduce`` ...), and ``torch._ops``'s public names
(``OpOverload``, ``OpOverloadPacket``, ``ops``), which live in ``tinytorch._ops_namespace``: they are looked up
lazily so that importing an op module stays free of the namespace machinery."""

_NAMESPACE_NAMES = ("OpOverload", "OpOverloadPacket", "ops", "_OpNamespace", "_Ops")


def __getattr__(name):
    if name in _NAMESPACE_NAMES:
        from .. import _ops_namespace
        return getattr(_ops_namespace, name)
    raise AttributeError(f"module 'tinytorch._ops' has no attribute '{name}'")
