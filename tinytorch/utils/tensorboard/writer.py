"""``SummaryWriter`` and ``FileWriter`` (``torch.utils.tensorboard.writer``): summaries wrapped in ``Event``
protobufs and written by tensorboard's ``EventFileWriter``."""
import os
import socket
import time
from datetime import datetime

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from .summary import histogram, hparams, image, scalar, text

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """One event file in ``log_dir`` (tensorboard's ``EventFileWriter``: queued, flushed every ``flush_secs``)."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        """The directory of the event file."""
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        """Write ``event`` with ``walltime`` (default now) and ``step``."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_graph(self, graph_profile, walltime=None):
        """Write a (GraphDef, RunMetadata) pair: the graph, then its step stats tagged "step1", as PyTorch's."""
        from tensorboard.compat.proto.event_pb2 import TaggedRunMetadata
        graph, stats = graph_profile
        self.add_event(Event(graph_def=graph.SerializeToString()), None, walltime)
        meta = TaggedRunMetadata(tag="step1", run_metadata=stats.SerializeToString())
        self.add_event(Event(tagged_run_metadata=meta), None, walltime)

    def add_summary(self, summary, global_step=None, walltime=None):
        """Write ``summary`` in an Event."""
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self):
        """Write the queued events to disk."""
        self.event_writer.flush()

    def close(self):
        """Flush and close the file."""
        self.event_writer.close()

    def reopen(self):
        """Open a new event file after ``close``."""
        self.event_writer.reopen()


class SummaryWriter:
    """Write TensorBoard summaries to event files in ``log_dir`` (``torch.utils.tensorboard.SummaryWriter``).

    ``log_dir`` defaults to ``runs/<Mon DD_HH-MM-SS>_<hostname><comment>``. ``purge_step`` starts the file with
    the events that make TensorBoard hide those of an earlier crashed run from that step on. Values may be
    tinytorch tensors, numpy arrays or numbers. The writer reopens its files when used after ``close``.
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120, filename_suffix=""):
        if not log_dir:
            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname()
                                   + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        # TensorFlow's default histogram buckets: +-1e-12 growing by 10% to 1e20, and 0
        v, pos = 1e-12, []
        while v < 1e20:
            pos.append(v)
            v *= 1.1
        self.default_bins = [-b for b in reversed(pos)] + [0] + pos

    def _get_file_writer(self):
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory event files are written to."""
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Log one number (a float, int, or one-element tensor/array) under ``tag`` at ``global_step``."""
        self._get_file_writer().add_summary(scalar(tag, scalar_value, new_style=new_style,
                                                   double_precision=double_precision), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Log several numbers on one chart: each ``tag`` goes to its own run directory
        ``<log_dir>/<main_tag with / as _>_<tag>``, under the tag ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        base = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            fw_tag = base + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = self.all_writers[fw_tag] = FileWriter(fw_tag, self.max_queue, self.flush_secs,
                                                           self.filename_suffix)
            fw.add_summary(scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """Log the histogram of ``values``; ``bins`` is ``numpy.histogram``'s (``"tensorflow"``: the default
        buckets, ``default_bins``)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Log an image laid out as ``dataformats`` (``CHW``, ``HWC``, ``HW``, ``NCHW`` ... ; 1, 3 or 4 channels):
        uint8 in [0, 255], or floats in [0, 1]."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Log a batch of images tiled into one grid image."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Log a string (Markdown in TensorBoard) under ``<tag>/text_summary``."""
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None):
        """Log hyperparameters and their metrics for the HParams dashboard, in the run directory
        ``<log_dir>/<run_name>`` (default: the current time); each metric is also logged as a scalar there.
        TypeError when either dict is not a dict."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w:
            w.file_writer.add_summary(exp, global_step)
            w.file_writer.add_summary(ssi, global_step)
            w.file_writer.add_summary(sei, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Write ``model``'s graph traced on ``input_to_model`` (a tensor or a tuple of them): see
        ``tinytorch/utils/tensorboard/_graph.py`` for how the nodes are named. ``verbose`` prints the traced code;
        ``use_strict_trace`` is accepted for PyTorch's signature (an fx trace has no strict mode)."""
        from ._graph import graph
        graph_profile = graph(model, input_to_model)
        if verbose:
            print(graph_profile[0])
        self._get_file_writer().add_graph(graph_profile)

    def flush(self):
        """Write every queued event to disk."""
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()

    def close(self):
        """Flush and close the event files (a second close does nothing)."""
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()
            w.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
