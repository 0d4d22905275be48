"""Run the ComfyUI example workflows' nodes directly (no ComfyUI needed) and save a picture of their output.

    python examples/comfyui_preview.py       # writes docs/comfyui_example.png

The input image is synthetic (colour gradients and a disc), so the script needs no files.
"""
import importlib.util
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PACK = os.path.join(HERE, "..", "comfyui_tinytorch")


def load_pack():
    spec = importlib.util.spec_from_file_location("comfyui_tinytorch", os.path.join(PACK, "__init__.py"),
                                                  submodule_search_locations=[PACK])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def synthetic(h=96, w=96):
    y, x = np.mgrid[0:h, 0:w] / np.array([h, w]).reshape(2, 1, 1)
    img = np.stack([x, y, 1 - x * y], -1)
    disc = (x - 0.6) ** 2 + (y - 0.4) ** 2 < 0.05
    img[disc] = [1.0, 0.9, 0.2]
    return img[None].astype(np.float32)


def main():
    import torch
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    nodes = load_pack().NODE_CLASS_MAPPINGS
    img = torch.from_numpy(synthetic())
    with torch.inference_mode():
        conv, _ = nodes["TinyTorchConv2D"]().apply(3, 3, 3, 1, 1, True, 0, image=img)
        _, act = nodes["TinyTorchActivation"]().apply("sigmoid", image=conv)
        target = 1.0 - img  # ComfyUI's ImageInvert
        fit = nodes["TinyTorchFit"]().fit(img, target, steps=100, learning_rate=0.01, hidden_channels=8, seed=0)
    fitted, loss = fit["result"]
    panels = [(img, "input"), (act, "Conv2D -> sigmoid"), (target, "target (ImageInvert)"),
              (fitted, f"Fit, 100 Adam steps\nmse {loss:.4f}")]
    fig, axes = plt.subplots(1, 4, figsize=(10, 3))
    for ax, (t, title) in zip(axes, panels):
        ax.imshow(t[0].numpy().clip(0, 1))
        ax.set_title(title, fontsize=9)
        ax.axis("off")
    fig.tight_layout()
    out = os.path.join(HERE, "..", "docs", "comfyui_example.png")
    fig.savefig(out, dpi=90)
    print(f"saved {os.path.normpath(out)} (fit loss {loss:.5f})")


if __name__ == "__main__":
    main()
