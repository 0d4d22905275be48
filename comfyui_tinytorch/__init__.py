"""tinytorch as ComfyUI nodes. Copy or symlink this folder into ``ComfyUI/custom_nodes/``.

ComfyUI reads ``NODE_CLASS_MAPPINGS`` and ``NODE_DISPLAY_NAME_MAPPINGS`` from here.
"""
import os
import sys

# ComfyUI imports this folder as a package; make the tinytorch next to it importable when the pack is a
# symlink into a checkout that was not pip-installed.
_repo = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
if os.path.isdir(os.path.join(_repo, "tinytorch")) and _repo not in sys.path:
    sys.path.append(_repo)

from .nodes import NODE_CLASS_MAPPINGS, NODE_DISPLAY_NAME_MAPPINGS  # noqa: E402

__all__ = ["NODE_CLASS_MAPPINGS", "NODE_DISPLAY_NAME_MAPPINGS"]
