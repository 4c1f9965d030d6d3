"""Gathers, layout changes and pooling in the style of public NKI kernels, for the `auto` A/B
on kernels the passes were not developed on (bench/auto_ab.py --set nki-style)."""

import tandem
from tandem import nki
import tandem.nki.isa as nisa
import tandem.nki.language as nl

P = nl.tile_size.pmax


@nki.jit
def embedding_lookup(table, ids):
    """Rows of an embedding table gathered through 128 token ids at a time, scaled."""
    tokens, _ = ids.shape
    vocab, dim = table.shape
    out = nl.ndarray((tokens, dim), dtype=table.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(dim)[None, :]
    for t in nl.affine_range(tokens // P):
        idx = nl.load(ids[nl.ds(t * P, P), :])
        rows = nl.load(table[idx, i_f])
        nl.store(out[nl.ds(t * P, P), :], value=nl.multiply(rows, 8.0))
    return out


@nki.jit
def gather_pair_sum(table, ids_a, ids_b):
    """Two gathers per tile from one table and their sum (token plus position embedding)."""
    tokens, _ = ids_a.shape
    vocab, dim = table.shape
    out = nl.ndarray((tokens, dim), dtype=table.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(dim)[None, :]
    for t in nl.affine_range(tokens // P):
        a = nl.load(table[nl.load(ids_a[nl.ds(t * P, P), :]), i_f])
        b = nl.load(table[nl.load(ids_b[nl.ds(t * P, P), :]), i_f])
        nl.store(out[nl.ds(t * P, P), :], value=nl.add(a, b))
    return out


@nki.jit
def transpose_blocks(x):
    """[rows, cols] to [cols, rows] in 128 x 128 blocks through TensorE."""
    rows, cols = x.shape
    out = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // P):
        strip = nl.load(x[nl.ds(i * P, P), :])
        for j in nl.affine_range(cols // P):
            t = nl.copy(nisa.nc_transpose(strip[:, nl.ds(j * P, P)]), dtype=x.dtype)
            nl.store(out[nl.ds(j * P, P), nl.ds(i * P, P)], value=t)
    return out


@nki.jit
def transpose_dma(x):
    """The same transpose through the DMA engines (nl.load_transpose2d)."""
    rows, cols = x.shape
    out = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // P):
        for j in nl.affine_range(cols // P):
            t = nl.load_transpose2d(x[nl.ds(i * P, P), nl.ds(j * P, P)])
            nl.store(out[nl.ds(j * P, P), nl.ds(i * P, P)], value=t)
    return out


@nki.jit
def maxpool_2x2(x):
    """[planes, h, w] planes on partitions, 2 x 2 windows with stride 2: each row pair loaded
    once, the maxima of its even and odd columns."""
    planes, h, w = x.shape
    out = nl.ndarray((planes, h // 2, w // 2), dtype=x.dtype, buffer=nl.shared_hbm)
    for p in nl.affine_range(planes // P):
        for r in nl.affine_range(h // 2):
            pair = nl.load(x[nl.ds(p * P, P), nl.ds(2 * r, 2), :])
            rowmax = nl.maximum(pair[:, 0, :], pair[:, 1, :])
            i_p, i_w = nl.mgrid[0:P, 0:w // 2]
            m = nl.maximum(rowmax[i_p, 2 * i_w], rowmax[i_p, 2 * i_w + 1])
            nl.store(out[nl.ds(p * P, P), r, :], value=m)
    return out


@nki.jit
def avgpool_1d(x):
    """Average over windows of 4 along the sequence with stride 4, 2048 outputs per tile."""
    channels, seq = x.shape
    out = nl.ndarray((channels, seq // 4), dtype=x.dtype, buffer=nl.shared_hbm)
    chunk = 2048
    for c in nl.affine_range(channels // P):
        for j in nl.affine_range(seq // (4 * chunk)):
            t = nl.load(x[nl.ds(c * P, P), nl.ds(j * 4 * chunk, 4 * chunk)])
            s = nl.sum(t.reshape((P, chunk, 4)), axis=[2])
            nl.store(out[nl.ds(c * P, P), nl.ds(j * chunk, chunk)], value=nl.multiply(s, 0.25))
    return out


@nki.jit
def depthwise_conv1d(x, weights):
    """A 3-tap depthwise convolution along the sequence: the input tile with a one-column halo on
    each side, three shifted multiply-adds with per-channel weights."""
    channels, seq = x.shape
    out = nl.ndarray((channels, seq - 2), dtype=x.dtype, buffer=nl.shared_hbm)
    chunk = 1024
    for c in nl.affine_range(channels // P):
        wt = nl.load(weights[nl.ds(c * P, P), :])
        for j in nl.affine_range((seq - 2) // chunk):
            t = nl.load(x[nl.ds(c * P, P), nl.ds(j * chunk, chunk + 2)])
            acc = nl.multiply(t[:, 0:chunk], wt[:, 0:1])
            acc = nl.add(acc, nl.multiply(t[:, 1:chunk + 1], wt[:, 1:2]))
            acc = nl.add(acc, nl.multiply(t[:, 2:chunk + 2], wt[:, 2:3]))
            nl.store(out[nl.ds(c * P, P), nl.ds(j * chunk, chunk)], value=acc)
    return out


@nki.jit
def cast_concat(a, b):
    """Two fp32 tensors cast to bf16 and written side by side."""
    rows, ca = a.shape
    _, cb = b.shape
    out = nl.ndarray((rows, ca + cb), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // P):
        nl.store(out[nl.ds(i * P, P), 0:ca], value=nl.copy(nl.load(a[nl.ds(i * P, P), :]), dtype=nl.bfloat16))
        nl.store(out[nl.ds(i * P, P), ca:ca + cb], value=nl.copy(nl.load(b[nl.ds(i * P, P), :]), dtype=nl.bfloat16))
    return out


EXAMPLES = {
    "embedding_lookup": (("32000x1024", tandem.tensor((2048, 1), "int32")), {"dtype": "bf16"}),
    "gather_pair_sum": (("4096x512", tandem.tensor((2048, 1), "int32"), tandem.tensor((2048, 1), "int32")),
                        {"dtype": "bf16"}),
    "transpose_blocks": (("1024x2048",), {"dtype": "bf16"}),
    "transpose_dma": (("1024x1024",), {"dtype": "bf16"}),
    "maxpool_2x2": (("128x64x256",), {"dtype": "f32"}),
    "avgpool_1d": (("256x16384",), {"dtype": "f32"}),
    "depthwise_conv1d": (("256x8194", "256x3"), {"dtype": "f32"}),
    "cast_concat": (("2048x1024", "2048x512"), {"dtype": "f32"}),
}
