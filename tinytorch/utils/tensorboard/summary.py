"""``Summary`` protobufs for scalars, histograms, images, text and hyperparameters, built with the ``tensorboard``
package's own messages (``torch.utils.tensorboard.summary``)."""
import struct
import zlib

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

__all__ = ["scalar", "histogram", "make_histogram", "image", "make_image", "text", "hparams", "make_np"]


def make_np(x):
    """``x`` (a tinytorch tensor, numpy array or Python number) as a numpy array. NotImplementedError for
    another type, as PyTorch's."""
    from ..._tensor import Tensor
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, Tensor):
        return x.detach().cpu().numpy()
    if np.isscalar(x):
        return np.array([x])
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """A Summary with one scalar: ``simple_value``, or with ``new_style`` a float (double with
    ``double_precision``) TensorProto of the ``scalars`` plugin. AssertionError when ``tensor`` has more than
    one element."""
    arr = make_np(tensor).squeeze()
    if arr.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {arr.size} and "
                             f"{arr.ndim} dimensions.")
    value = float(arr)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=value)])
    proto = (TensorProto(double_val=[value], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[value], dtype="DT_FLOAT"))
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=meta)])


def make_histogram(values, bins, max_bins=None):
    """A HistogramProto of ``values`` (flattened float64) with ``numpy.histogram``'s ``bins``: min, max, count,
    sum, sum of squares, and the buckets from the one before the first non-empty to the last non-empty (TensorBoard
    keeps only right limits). ValueError for no values; ``max_bins`` merges neighbouring buckets."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        rest = len(counts) % group
        if rest:
            counts = np.pad(counts, [[0, group - rest]], mode="constant")
        counts = counts.reshape(-1, group).sum(axis=-1)
        merged = np.empty((counts.size + 1,), limits.dtype)
        merged[:-1] = limits[:-1:group]
        merged[-1] = limits[-1]
        limits = merged
    nonzero = np.cumsum(counts > 0)
    start, end = np.searchsorted(nonzero, [0, nonzero[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(), bucket=counts.tolist())


def histogram(name, values, bins, max_bins=None):
    """A Summary with the histogram of ``values`` (see ``make_histogram``)."""
    return Summary(value=[Summary.Value(tag=name, histo=make_histogram(make_np(values).astype(float), bins,
                                                                        max_bins))])


def _make_grid(imgs, ncols=8):
    """N images (N, C, H, W), C 1 or 3, tiled row by row into one (3, H*rows, W*cols) image."""
    if imgs.shape[1] == 1:
        imgs = np.concatenate([imgs, imgs, imgs], 1)
    if imgs.ndim != 4 or imgs.shape[1] not in (3, 4):
        raise AssertionError("Expected a batch of 1, 3 or 4-channel images")
    n, c, h, w = imgs.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((c, h * nrows, w * ncols), dtype=imgs.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = imgs[i]
    return canvas


def convert_to_HWC(tensor, input_format):
    """``tensor`` laid out as ``input_format`` (``NCHW``, ``CHW``, ``HWC``, ``HW`` ... in any order) turned into
    an (H, W, C) array; gray images get 3 channels, a batch is tiled into a grid. AssertionError when the format
    repeats a letter or its length differs from the tensor's dims."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(f"You can not use the same dimension shorthand twice. input_format: {input_format}")
    if len(tensor.shape) != len(input_format):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: {tensor.shape}, "
                             f"input_format: {input_format}")
    fmt = input_format.upper()
    if len(fmt) == 4:
        return _make_grid(tensor.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = tensor.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    hw = tensor.transpose([fmt.find(c) for c in "HW"])
    return np.stack([hw, hw, hw], 2)


def _png(img):
    """PNG bytes of an (H, W, C) uint8 array, C 1 (gray), 3 (RGB) or 4 (RGBA): 8-bit, no filtering, zlib."""
    h, w, c = img.shape
    color = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    raw = b"".join(b"\x00" + img[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def make_image(tensor, rescale=1):
    """A ``Summary.Image`` of an (H, W, C) uint8 array, PNG-encoded; ``rescale`` resizes it (nearest pixel)."""
    height, width, channel = tensor.shape
    if rescale != 1:
        rows = (np.arange(int(height * rescale)) / rescale).astype(int).clip(0, height - 1)
        cols = (np.arange(int(width * rescale)) / rescale).astype(int).clip(0, width - 1)
        tensor = tensor[rows][:, cols]
    return Summary.Image(height=height, width=width, colorspace=channel,
                         encoded_image_string=_png(np.ascontiguousarray(tensor)))


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """A Summary with one image: uint8 values are kept, other dtypes are taken as [0, 1] and scaled by 255;
    values are clipped to [0, 255]."""
    arr = convert_to_HWC(make_np(tensor), dataformats)
    scale = 1 if arr.dtype == np.uint8 else 255
    arr = (arr.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(arr, rescale=rescale))])


def text(tag, text):
    """A Summary with one string for the ``text`` plugin, under ``<tag>/text_summary``."""
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=proto)])


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The three Summaries of the ``hparams`` plugin: the experiment (hyperparameter and metric names, types and
    discrete domains), the session start (the values) and the session end (success). TypeError when a dict
    argument is not a dict or a domain does not fit its hyperparameter; ValueError for a value of another type
    than int, float, str, bool or a tensor (a None value is skipped)."""
    from tensorboard.plugins.hparams.api_pb2 import DataType, Experiment, HParamInfo, MetricInfo, MetricName, Status
    from tensorboard.plugins.hparams.metadata import (EXPERIMENT_TAG, PLUGIN_DATA_VERSION, PLUGIN_NAME,
                                                      SESSION_END_INFO_TAG, SESSION_START_INFO_TAG)
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData, SessionEndInfo, SessionStartInfo
    from ..._tensor import Tensor

    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                            f"hparam_dict[{k}].")
    infos = []
    ssi = SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        # a bool is an int: logged as a number, as PyTorch does (its bool branch is never reached)
        if isinstance(v, (int, float)):
            ssi.hparams[k].number_value = v
            kind, field = "DATA_TYPE_FLOAT64", "number_value"
        elif isinstance(v, str):
            ssi.hparams[k].string_value = v
            kind, field = "DATA_TYPE_STRING", "string_value"
        elif isinstance(v, Tensor):
            ssi.hparams[k].number_value = make_np(v).reshape(-1)[0]
            infos.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        info = HParamInfo(name=k, type=DataType.Value(kind))
        if k in domains:  # a protobuf ListValue: appending Python values fills number/string/bool fields by type
            info.domain_discrete.extend([float(d) if field == "number_value" else d for d in domains[k]])
        infos.append(info)

    def wrap(tag, content):
        meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=PLUGIN_NAME,
                                                                      content=content.SerializeToString()))
        return Summary(value=[Summary.Value(tag=tag, metadata=meta)])
    start = wrap(SESSION_START_INFO_TAG, HParamsPluginData(session_start_info=ssi, version=PLUGIN_DATA_VERSION))
    exp = Experiment(hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    experiment = wrap(EXPERIMENT_TAG, HParamsPluginData(experiment=exp, version=PLUGIN_DATA_VERSION))
    end = wrap(SESSION_END_INFO_TAG, HParamsPluginData(session_end_info=SessionEndInfo(
        status=Status.Value("STATUS_SUCCESS")), version=PLUGIN_DATA_VERSION))
    return experiment, start, end
