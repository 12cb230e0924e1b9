"""The files of ``add_embedding``, for TensorBoard's projector: ``tensors.tsv`` (one row per point),
``metadata.tsv`` (labels), ``sprite.png`` (the points' thumbnails in one square picture) and the run's
``projector_config.pbtxt``, a ``ProjectorConfig`` message in protobuf's text format."""
import math
import os

import numpy as np

from .images import make_grid
from .png import encode_png

__all__ = ["make_tsv", "make_sprite", "make_mat", "embedding_info", "projector_config_text"]


def make_tsv(metadata, save_path, metadata_header=None):
    """``metadata.tsv``: one label per line, or, with a header, tab-separated columns under it."""
    if not metadata_header:
        lines = [str(x) for x in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in metadata")
        lines = ["\t".join(str(e) for e in row) for row in [metadata_header, *metadata]]
    with open(os.path.join(save_path, "metadata.tsv"), "wb") as f:
        f.write(("\n".join(lines) + "\n").encode("utf-8"))


def make_sprite(label_images, save_path):
    """``sprite.png``: the (N, C, H, W) images tiled ``ceil(sqrt(N))`` to a row in a square canvas."""
    nrow = math.ceil(label_images.shape[0] ** 0.5)
    grid = make_grid(label_images, ncols=nrow).transpose(1, 2, 0)
    square = np.zeros((grid.shape[1], grid.shape[1], 3))
    square[:grid.shape[0]] = grid
    with open(os.path.join(save_path, "sprite.png"), "wb") as f:
        f.write(encode_png(np.uint8((square * 255).clip(0, 255))))


def make_mat(matrix, save_path):
    """``tensors.tsv``: each row of the (N, D) array, its numbers as Python prints them, tab-separated."""
    with open(os.path.join(save_path, "tensors.tsv"), "wb") as f:
        for row in matrix:
            f.write(("\t".join(str(x.item()) for x in row) + "\n").encode("utf-8"))


def embedding_info(has_metadata, sprite_size, subdir, global_step, tag):
    """One ``EmbeddingInfo`` of the projector config as (field, value) pairs in field-number order;
    ``sprite_size`` is the thumbnails' (width, height), or None."""
    fields = [("tensor_name", f"{tag}:{str(global_step).zfill(5)}")]
    if has_metadata:
        fields.append(("metadata_path", os.path.join(subdir, "metadata.tsv")))
    if sprite_size is not None:
        fields.append(("sprite", [("image_path", os.path.join(subdir, "sprite.png")),
                                  *(("single_image_dim", size) for size in sprite_size)]))
    fields.append(("tensor_path", os.path.join(subdir, "tensors.tsv")))
    return fields


def _text_format(fields, indent):
    lines = []
    for name, value in fields:
        if isinstance(value, list):
            lines += [f"{indent}{name} {{", *_text_format(value, indent + "  "), f"{indent}}}"]
        elif isinstance(value, str):
            escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            lines.append(f'{indent}{name}: "{escaped}"')
        else:
            lines.append(f"{indent}{name}: {value}")
    return lines


def projector_config_text(embeddings):
    """The ``ProjectorConfig`` holding ``embeddings`` (lists of ``embedding_info`` pairs), in protobuf's
    text format."""
    return "".join(line + "\n" for line in _text_format([("embeddings", e) for e in embeddings], ""))
