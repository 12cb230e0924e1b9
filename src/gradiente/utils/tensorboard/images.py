"""Arranging image data for ``add_image``/``add_images``/``add_figure``: any ``dataformats`` to height × width ×
channels, a batch tiled into one grid, and a matplotlib figure rendered to pixels."""
import numpy as np

__all__ = ["convert_to_HWC", "make_grid", "figure_to_image"]


def make_grid(images, ncols=8):
    """A batch of images (N, 1 or 3, H, W) tiled into one (3, rows·H, ncols·W) picture, row by row, the
    unused cells black; single-channel images are repeated into three."""
    if not isinstance(images, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    count, _channels, height, width = images.shape
    ncols = min(count, ncols)
    nrows = -(-count // ncols)
    canvas = np.zeros((3, height * nrows, width * ncols), dtype=images.dtype)
    for i in range(count):
        row, col = divmod(i, ncols)
        canvas[:, row * height:(row + 1) * height, col * width:(col + 1) * width] = images[i]
    return canvas


def convert_to_HWC(tensor, input_format):
    """``tensor`` (a NumPy array laid out as ``input_format``: NCHW, HWC, HW, ... in any order) as height ×
    width × channels, with grey images made RGB and a batch (N) tiled by ``make_grid``."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError("You can not use the same dimension shorthand twice.             "
                             f"input_format: {input_format}")
    if len(tensor.shape) != len(input_format):
        raise AssertionError("size of input tensor and input format are different.         "
                             f"tensor shape: {tensor.shape}, input_format: {input_format}")
    input_format = input_format.upper()
    if len(input_format) == 4:
        grid = make_grid(tensor.transpose([input_format.find(c) for c in "NCHW"]))
        return grid.transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = tensor.transpose([input_format.find(c) for c in "HWC"])
        if hwc.shape[2] == 1:
            hwc = np.concatenate([hwc, hwc, hwc], 2)
        return hwc
    if len(input_format) == 2:
        hw = tensor.transpose([input_format.find(c) for c in "HW"])
        return np.stack([hw, hw, hw], 2)
    return None   # as in PyTorch, another number of dimensions is not caught here (make_image fails on it)


def figure_to_image(figures, close=True):
    """A matplotlib figure rendered to a (3, H, W) ``uint8`` array, or a list of figures to (N, 3, H, W).
    matplotlib is imported here, so that gradiente does not need it unless a figure is logged."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(figure):
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8)
        width, height = figure.canvas.get_width_height()
        chw = np.moveaxis(rgba.reshape(height, width, 4)[:, :, :3], 2, 0)
        if close:
            plt.close(figure)
        return chw

    if isinstance(figures, list):
        return np.stack([render(figure) for figure in figures])
    return render(figures)
