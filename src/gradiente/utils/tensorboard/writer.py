"""``SummaryWriter`` and ``FileWriter``, as ``torch.utils.tensorboard``: log scalars, histograms, images, text,
hyperparameters and embeddings to event files that TensorBoard reads (``tensorboard --logdir runs``).

The values logged may be gradiente Tensors, NumPy arrays or Python numbers. The events written are those
PyTorch's writer writes, field for field (``tests/test_tensorboard.py`` reads both back with TensorBoard's own
reader), with these intended differences:

* nothing beyond the standard library and NumPy is needed: PyTorch's writer requires the ``tensorboard`` and
  ``protobuf`` packages (and Pillow for images); gradiente encodes the messages (``messages.py``,
  ``protobuf.py``), the records (``record_writer.py``) and the PNG images (``png.py``) itself;
* PNG images decode to the same pixels but are not byte-for-byte Pillow's files;
* the first event names its writer ``gradiente.utils.tensorboard`` (``source_metadata.writer``);
* events are written without a background thread (``event_file.py`` says when they reach the disk);
* ``add_graph`` raises ``NotImplementedError`` (see its docstring); the audio, video, mesh, PR-curve and
  custom-scalar summaries are not provided.
"""
import os
import time

from . import embedding, messages
from . import summary as summaries
from .event_file import EventFileWriter
from .images import figure_to_image

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes events to one event file in ``log_dir`` (a ``SummaryWriter`` holds one per directory)."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        # a pathlib.Path is accepted and kept as a string, as PyTorch does
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        """The directory of the event file."""
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        """Adds an event. gradiente has no protobuf classes, so ``event`` is a dict of the ``Event`` fields
        (``file_version``, ``summary`` or ``session_log``, encoded as ``messages`` encodes them); ``walltime``
        defaults to now."""
        wall_time = time.time() if walltime is None else walltime
        self.event_writer.add_event(messages.event(wall_time=wall_time, step=0 if step is None else int(step),
                                                   **event))

    def add_summary(self, summary, global_step=None, walltime=None):
        """Adds an encoded ``Summary`` message as an event at ``global_step``."""
        self.add_event({"summary": summary}, global_step, walltime)

    def flush(self):
        """Writes every pending event to disk."""
        self.event_writer.flush()

    def close(self):
        """Writes every pending event and closes the file."""
        self.event_writer.close()


def _default_histogram_bins():
    # TensorFlow's default buckets: ±1e-12 growing by 10% up to ±1e20, and 0
    v, positive = 1e-12, []
    while v < 1e20:
        positive.append(v)
        v *= 1.1
    return [-b for b in reversed(positive)] + [0] + positive


def _default_log_dir(comment):
    import socket
    from datetime import datetime
    return os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname() + comment)


class SummaryWriter:
    """Writes summaries to event files in ``log_dir``, by default ``runs/<Mon><DD>_<HH-MM-SS>_<host><comment>``.

    ``purge_step`` marks a restart: TensorBoard hides the events of an earlier run at that step and later.
    ``max_queue`` events wait before they are written, and at most ``flush_secs`` seconds at the next call;
    ``filename_suffix`` ends every event file's name. Usable as a context manager (closes on exit)."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            log_dir = _default_log_dir(comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        # the writers are made again on the first call after close(), in a new event file
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _default_histogram_bins()

    def _get_file_writer(self):
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event({"file_version": "brain.Event:2"}, self.purge_step)
                self.file_writer.add_event({"session_log": messages.session_log(messages.SESSION_LOG_START)},
                                           self.purge_step)
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory where event files are written."""
        return self.log_dir

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """Logs one run's hyperparameters (``bool``, ``str``, ``float``, ``int``, a 1-element Tensor or None)
        with its metrics, for the HPARAMS tab, in the subdirectory ``run_name`` (default: the current time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        experiment, start, end = summaries.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as run_writer:
            for summary in (experiment, start, end):
                run_writer.file_writer.add_summary(summary, global_step)
            for key, value in metric_dict.items():
                run_writer.add_scalar(key, value, global_step)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Logs one number (a Python number, or a 1-element Tensor or array). ``new_style`` stores it as a
        tensor (faster for TensorBoard to load), in float64 with ``double_precision``."""
        summary = summaries.scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Logs several numbers on one chart: each key of ``tag_scalar_dict`` goes to its own run,
        ``<log_dir>/<main_tag>_<key>`` (slashes in ``main_tag`` made underscores), under the tag ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        log_dir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            run_dir = log_dir + "/" + main_tag.replace("/", "_") + "_" + tag
            if run_dir not in self.all_writers:
                self.all_writers[run_dir] = FileWriter(run_dir, self.max_queue, self.flush_secs,
                                                       self.filename_suffix)
            self.all_writers[run_dir].add_summary(summaries.scalar(main_tag, scalar_value), global_step,
                                                  walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        """Logs a whole Tensor (its dtype, shape and values)."""
        self._get_file_writer().add_summary(summaries.tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """Logs the histogram of ``values``. ``bins="tensorflow"`` uses TensorFlow's fixed, exponentially
        spaced buckets; any other value is NumPy's (``"auto"``, ``"fd"``, a count, or the edges)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(summaries.histogram(tag, values, bins, max_bins=max_bins),
                                            global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,
                          global_step=None, walltime=None):
        """Logs a histogram computed by the caller: statistics, and each bucket's right edge and count."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        summary = summaries.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Logs one picture: floats in [0, 1] or ``uint8`` in [0, 255], laid out as ``dataformats`` (``CHW``,
        ``HWC``, ``HW``...). Encoded as PNG here, without Pillow."""
        self._get_file_writer().add_summary(summaries.image(tag, img_tensor, dataformats=dataformats),
                                            global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Logs a batch of pictures, tiled into one grid of 8 to a row."""
        self._get_file_writer().add_summary(summaries.image(tag, img_tensor, dataformats=dataformats),
                                            global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Logs a matplotlib figure (or a list of them, as a batch) as a picture, closing it unless
        ``close=False``. matplotlib is needed only here."""
        dataformats = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime, dataformats=dataformats)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Logs a string (Markdown) under ``<tag>/text_summary``."""
        self._get_file_writer().add_summary(summaries.text(tag, text_string), global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Not available in gradiente: raises ``NotImplementedError``.

        PyTorch runs the model under ``torch.jit.trace`` and converts the TorchScript graph it records into a
        TensorFlow ``GraphDef``; gradiente has no tracer and no graph IR to convert (its graph is the autograd
        graph of one run, built as the ops execute). To look at that graph, use ``gradiente.viz.make_dot`` or
        ``gradiente.viz.to_text`` on the model's output."""
        raise NotImplementedError(
            "SummaryWriter.add_graph needs torch.jit.trace's TorchScript graph, which gradiente does not have. "
            "To see the autograd graph of a forward pass, use gradiente.viz.make_dot(model(input)) "
            "or print(gradiente.viz.to_text(model(input))).")

    @staticmethod
    def _encode(rawstr):
        # a tag becomes one directory name: escape "%" first, then the path separators
        return rawstr.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Logs points for TensorBoard's projector: ``mat`` (N, D), with optional labels ``metadata`` (N) and
        thumbnails ``label_img`` (N, C, H, W), in ``<log_dir>/<global_step:05>/<tag>``."""
        mat = summaries.make_np(mat)
        if global_step is None:
            global_step = 0
        subdir = f"{str(global_step).zfill(5)}/{self._encode(tag)}"
        save_path = os.path.join(self._get_file_writer().get_logdir(), subdir)
        if os.path.exists(save_path):
            if os.path.isdir(save_path):
                print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
            else:
                raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
        else:
            os.makedirs(save_path)
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            embedding.make_tsv(metadata, save_path, metadata_header=metadata_header)
        sprite_size = None
        if label_img is not None:
            images = summaries.make_np(label_img)
            if mat.shape[0] != images.shape[0]:
                raise AssertionError("#images should equal with #data points")
            embedding.make_sprite(images, save_path)
            sprite_size = (images.shape[3], images.shape[2])
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
        embedding.make_mat(mat, save_path)
        # the config lists every embedding of this writer, so it is rewritten whole each time
        if not hasattr(self, "_projector_config"):
            self._projector_config = []
        self._projector_config.append(embedding.embedding_info(metadata is not None, sprite_size, subdir,
                                                               global_step, tag))
        config_path = os.path.join(self._get_file_writer().get_logdir(), "projector_config.pbtxt")
        with open(config_path, "wb") as f:
            f.write(embedding.projector_config_text(self._projector_config).encode("utf-8"))

    def flush(self):
        """Writes every pending event of every run of this writer to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        """Writes what is pending and closes every event file; a later call opens new files."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()

