"""``torch.fx.passes``: analyses and transformations over FX graphs (``shape_prop.ShapeProp``)."""
from . import shape_prop  # noqa: F401
