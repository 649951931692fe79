"""Reading, validating and writing ELMo weights.hdf5 files (docs/bilm.md, "The weights file").

Every dataset a biLM needs is checked against the shapes its options imply before anything is
loaded, so a wrong, truncated or corrupt file fails with an error naming the file and the dataset.
Sources may be local paths or http(s)/file:// URLs (downloaded once by `fetch`).
"""

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from ner.bilm.options import BiLMOptions
from ner.common.errors import NerError
from ner.common.files import atomic_path

if TYPE_CHECKING:  # h5py (12 MB) is imported when a file is read or written, not with the tagger
    import h5py


class WeightsError(NerError, ValueError):
    """A weights.hdf5 file is unreadable or does not match its options."""


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """A detached float32 NumPy copy of a parameter (for writing weights.hdf5)."""
    return tensor.detach().to(device="cpu", dtype=torch.float32).numpy().copy()


def resolve(source: str | Path, desc: str | None = None) -> Path:
    """A local path for an options/weights source: a path as is, a URL downloaded once (cached)."""
    from ner.common.downloads import fetch

    return fetch(str(source), desc=desc)


def expected_shapes(options: BiLMOptions) -> dict[str, tuple[int, ...]]:
    """Every dataset of a weights.hdf5 for `options` and its shape (AllenNLP reads all of them)."""
    width_c, filters, hidden, proj = (
        options.char_embedding_dim,
        options.num_filters,
        options.lstm_dim,
        options.projection_dim,
    )
    shapes: dict[str, tuple[int, ...]] = {"char_embed": (options.char_vocabulary, width_c)}
    for i, (width, count) in enumerate(options.filters):
        shapes[f"CNN/W_cnn_{i}"] = (1, width, width_c, count)
        shapes[f"CNN/b_cnn_{i}"] = (count,)
    for k in range(options.n_highway):
        for name in ("carry", "transform"):
            shapes[f"CNN_high_{k}/W_{name}"] = (filters, filters)
            shapes[f"CNN_high_{k}/b_{name}"] = (filters,)
    shapes["CNN_proj/W_proj"] = (filters, proj)
    shapes["CNN_proj/b_proj"] = (proj,)
    for direction in range(2):
        for layer in range(options.n_layers):
            prefix = f"RNN_{direction}/RNN/MultiRNNCell/Cell{layer}/LSTMCell"
            shapes[f"{prefix}/W_0"] = (2 * proj, 4 * hidden)
            shapes[f"{prefix}/B"] = (4 * hidden,)
            shapes[f"{prefix}/W_P_0"] = (hidden, proj)
    return shapes


def count_parameters(options: BiLMOptions) -> int:
    """Number of biLM parameters stored in the weights file."""
    return sum(int(np.prod(shape)) for shape in expected_shapes(options).values())


_LAYER_PREFIXES = ("CNN/", "CNN_high_", "CNN_proj/", "RNN_")


def _check_no_extra_layers(
    weight_file: str | Path,
    handle: "h5py.File",
    shapes: dict[str, tuple[int, ...]],
    options: BiLMOptions,
) -> None:
    """Refuse a file with layers the options do not describe (e.g. more highway layers than
    ``n_highway``): loading only the first ones would silently give a different biLM."""
    import h5py

    names: list[str] = []
    handle.visit(names.append)
    extra = sorted(
        name
        for name in names
        if name.startswith(_LAYER_PREFIXES)
        and isinstance(handle[name], h5py.Dataset)
        and name not in shapes
    )
    if extra:
        raise WeightsError(
            f"{weight_file}: dataset '{extra[0]}' (and {len(extra) - 1} more) is not part of the "
            f"biLM that {options.source} describes (n_highway={options.n_highway}, "
            f"n_layers={options.n_layers}, {len(options.filters)} filters): the options file "
            "and the weights file do not belong together"
        )


def _check_counts(weight_file: str | Path, handle: "h5py.File", options: BiLMOptions) -> None:
    """Refuse options that ask for more layers or convolutions than the file holds, before
    `expected_shapes` lists them (a crafted ``n_layers`` of a million would take that long)."""
    import h5py

    cells = handle.get("RNN_0/RNN/MultiRNNCell")
    counts = {
        "lstm.n_layers": (options.n_layers, len(cells) if isinstance(cells, h5py.Group) else 0),
        "char_cnn.n_highway": (options.n_highway, sum(k.startswith("CNN_high_") for k in handle)),
        "char_cnn.filters": (len(options.filters), len(handle.get("CNN") or ()) // 2),
    }
    for key, (asked, held) in counts.items():
        if asked > held:
            raise WeightsError(
                f"{weight_file}: {options.source} asks for {asked} ({key}), the file holds "
                f"{held}: the options file and the weights file do not belong together"
            )


def read_weights(weight_file: str | Path, options: BiLMOptions) -> dict[str, np.ndarray]:
    """All datasets `options` needs, read into memory after checking names, shapes and values."""
    import h5py

    arrays: dict[str, np.ndarray] = {}
    try:
        with h5py.File(weight_file, "r") as handle:
            _check_counts(weight_file, handle, options)
            shapes = expected_shapes(options)
            _check_no_extra_layers(weight_file, handle, shapes, options)
            for name, shape in shapes.items():
                dataset = handle.get(name)
                if not isinstance(dataset, h5py.Dataset):
                    raise WeightsError(
                        f"{weight_file}: dataset '{name}' is missing"
                        f" (expected shape {shape} for {options.source})"
                    )
                if dataset.shape != shape:
                    raise WeightsError(
                        f"{weight_file}: dataset '{name}' has shape {dataset.shape},"
                        f" expected {shape} for {options.source}"
                    )
                if dataset.dtype.kind != "f":
                    raise WeightsError(
                        f"{weight_file}: dataset '{name}' has dtype {dataset.dtype}, expected float"
                    )
                try:
                    values = np.asarray(dataset[...], dtype=np.float32)
                except (OSError, RuntimeError) as error:
                    raise WeightsError(
                        f"{weight_file}: dataset '{name}' cannot be read (truncated or corrupt"
                        f" file?): {error}"
                    ) from error
                if not np.isfinite(values).all():
                    raise WeightsError(f"{weight_file}: dataset '{name}' contains NaN or inf")
                arrays[name] = values
    except OSError as error:
        raise WeightsError(
            f"{weight_file}: not a readable HDF5 weights file (truncated or corrupt?): {error}"
        ) from error
    return arrays


def write_weights(weight_file: str | Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Write datasets (name → array) as float32 in the weights.hdf5 layout, atomically."""
    import h5py

    with atomic_path(weight_file) as partial, h5py.File(partial, "w") as handle:
        for name, values in sorted(arrays.items()):
            handle.create_dataset(name, data=np.asarray(values, dtype=np.float32))
