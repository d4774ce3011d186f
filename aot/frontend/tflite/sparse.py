"""Sparse TFLite constants made dense at compile time (issue 50): what the converter writes for pruned
models (tfmot pruning, `tf.lite.Optimize.EXPERIMENTAL_SPARSITY`).

Written from the schema's definition of SparsityParameters (LiteRT's schema.fbs), not from TFLite's
code. A tensor of rank n whose dimensions block_map[j] are cut into blocks is traversed as n + k
dimensions: the n outer ones (dimension d's size divided by its block size where it is blocked) and one
per block (n + j, the inside of block j). traversal_order lists those n + k dimensions outermost first;
dim_metadata[i] describes the i-th of them: DENSE (dense_size positions, all stored) or SPARSE_CSR (for
each position of the level above, the stored positions array_segments[p] .. array_segments[p + 1] of
array_indices). The buffer holds the stored values in that traversal's order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from aot.errors import AotcError

_DENSE, _SPARSE_CSR = 0, 1


def _vector(v: Any, what: str, name: str) -> np.ndarray:
    """An array_segments / array_indices vector (Int32Vector, Uint16Vector or Uint8Vector) as int64."""
    if v is None or getattr(v, "values", None) is None:
        raise AotcError(f"sparse tensor '{name}': a SPARSE_CSR dimension has no {what}")
    return np.asarray(v.values, dtype=np.int64)


def densify(values: np.ndarray, shape: tuple[int, ...], sparsity: Any, name: str) -> np.ndarray:
    """The dense array of `shape` whose stored values (the buffer, in traversal order: a leaf's position
    at the last level is its value's index) are `values`; every position the format does not store is 0."""
    n = len(shape)
    if n == 0:
        raise AotcError(f"sparse tensor '{name}' is a scalar (rank 0)")
    order = [int(d) for d in (sparsity.traversalOrder if sparsity.traversalOrder is not None else range(n))]
    block_map = [int(d) for d in (sparsity.blockMap if sparsity.blockMap is not None else [])]
    levels = list(sparsity.dimMetadata or [])
    k = len(block_map)
    if sorted(order) != list(range(n + k)) or len(levels) != n + k:
        raise AotcError(f"sparse tensor '{name}': traversal_order {order} and {len(levels)} dim_metadata do not "
                        f"describe a rank-{n} tensor with {k} block dimension(s)")
    block = [0] * k  # block j's size along dimension block_map[j]: the dense_size of level n + j
    for level, dim in zip(levels, order, strict=True):
        if dim >= n:
            block[dim - n] = int(level.denseSize)
    # each stored value's index in every traversal dimension, built one level at a time: `pos` is each
    # surviving path's position at this level (what the next SPARSE_CSR level's segments are indexed by)
    pos = np.zeros(1, np.int64)
    index = np.zeros((1, n + k), np.int64)
    for level, dim in zip(levels, order, strict=True):
        if int(level.format) == _DENSE:
            size = int(level.denseSize)
            parent = np.repeat(np.arange(pos.size), size)
            here = np.tile(np.arange(size, dtype=np.int64), pos.size)
            pos = pos[parent] * size + here
        elif int(level.format) == _SPARSE_CSR:
            seg = _vector(level.arraySegments, "array_segments", name)
            idx = _vector(level.arrayIndices, "array_indices", name)
            if pos.size and (pos.max() + 1 >= seg.size or seg[-1] > idx.size):
                raise AotcError(f"sparse tensor '{name}': array_segments do not fit its array_indices")
            counts = seg[pos + 1] - seg[pos]
            if np.any(counts < 0) or (seg.size and seg[0] < 0):
                raise AotcError(f"sparse tensor '{name}': its array_segments decrease")
            parent = np.repeat(np.arange(pos.size), counts)
            pos = np.arange(counts.sum(), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts) \
                + np.repeat(seg[pos], counts)  # each parent's segment seg[p] .. seg[p + 1], in turn
            here = idx[pos]
        else:
            raise AotcError(f"sparse tensor '{name}': dimension format {int(level.format)} is not DENSE or "
                            "SPARSE_CSR")
        index = index[parent]
        index[:, dim] = here
    values = values.reshape(-1)
    if pos.size != values.size or (pos.size and (pos.min() < 0 or pos.max() >= values.size)):
        raise AotcError(f"sparse tensor '{name}': {values.size} stored values for {pos.size} positions")
    coords = [index[:, d] for d in range(n)]
    for j, d in enumerate(block_map):
        coords[d] = coords[d] * block[j] + index[:, n + j]
    for d in range(n):
        if coords[d].size and (coords[d].min() < 0 or coords[d].max() >= shape[d]):
            raise AotcError(f"sparse tensor '{name}': an index lies outside its shape {list(shape)}")
    dense = np.zeros(shape, values.dtype)
    dense[tuple(coords)] = values[pos]  # a leaf's position is its value's index in the buffer
    return dense


__all__ = ["densify"]
