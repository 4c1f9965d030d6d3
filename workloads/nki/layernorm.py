"""LayerNorm over the rows of a [rows, cols] tensor in NKI style, after the structure of the
public NKI LayerNorm tutorial (v1: nki.language only): 128 rows per iteration of the row
loop, mean and variance per row on VectorE, normalise, scale by gamma, shift by beta.
`layernorm_v2` follows the tutorial's v2: mean and variance from nisa.bn_stats over
512-element chunks and nisa.bn_aggr, the shift and scale in one nisa.tensor_scalar.

    PYTHONPATH=python python3 workloads/nki/layernorm.py
"""

import math

from tandem import nki
import tandem.nki.isa as nisa
import tandem.nki.language as nl


@nki.jit
def layernorm(input_tensor, epsilon, gamma_vector, beta_vector):
    output_tensor = nl.ndarray(input_tensor.shape, dtype=input_tensor.dtype, buffer=nl.shared_hbm)
    rows, cols = input_tensor.shape
    assert cols == gamma_vector.shape[0] == beta_vector.shape[0]

    # Index grids: 128 partitions by all columns; a single partition for the parameters.
    i_p, i_f, i_p1 = nl.mgrid[0:nl.tile_size.pmax, 0:cols, 0:1]

    # gamma and beta are loaded once into one partition each and broadcast to 128.
    gamma_sb = nl.load(gamma_vector.reshape((1, cols))[i_p1, i_f])
    beta_sb = nl.load(beta_vector.reshape((1, cols))[i_p1, i_f])
    gamma_b = gamma_sb.broadcast_to((nl.tile_size.pmax, cols))
    beta_b = beta_sb.broadcast_to((nl.tile_size.pmax, cols))

    for i in nl.affine_range(math.ceil(rows / nl.tile_size.pmax)):
        x = nl.load(input_tensor[i * nl.tile_size.pmax + i_p, i_f], mask=(i * nl.tile_size.pmax + i_p < rows))

        mean = nl.mean(x, axis=1)
        var = nl.mean(nl.square(x), axis=1) - mean * mean  # mean(x^2) - mean(x)^2

        normalised = (x - mean) * nl.rsqrt(var + epsilon)
        y = normalised * gamma_b + beta_b

        nl.store(output_tensor[i * nl.tile_size.pmax + i_p, i_f], value=y, mask=(i * nl.tile_size.pmax + i_p < rows))
    return output_tensor


@nki.jit
def layernorm_v2(input_tensor, epsilon, gamma_vector, beta_vector):
    output_tensor = nl.ndarray(input_tensor.shape, dtype=input_tensor.dtype, buffer=nl.shared_hbm)
    rows, cols = input_tensor.shape
    P = nl.tile_size.pmax
    chunk = nl.tile_size.bn_stats_fmax
    chunks = math.ceil(cols / chunk)
    assert cols % chunk == 0

    i_p, i_f, i_p1 = nl.mgrid[0:P, 0:cols, 0:1]
    gamma_b = nl.load(gamma_vector.reshape((1, cols))[i_p1, i_f]).broadcast_to((P, cols))
    beta_b = nl.load(beta_vector.reshape((1, cols))[i_p1, i_f]).broadcast_to((P, cols))

    for i in nl.affine_range(math.ceil(rows / P)):
        x = nl.load(input_tensor[i * P + i_p, i_f], mask=(i * P + i_p < rows))

        stats = nl.ndarray((nl.par_dim(P), 6 * chunks), dtype=nl.float32)
        for j in nl.affine_range(chunks):
            stats[0:P, j * 6:j * 6 + 6] = nisa.bn_stats(x[0:P, j * chunk:j * chunk + chunk])
        mean_var = nisa.bn_aggr(stats)
        mean = mean_var[0:P, 0:1]
        rstd = nl.rsqrt(mean_var[0:P, 1:2] + epsilon)

        normalised = nisa.tensor_scalar(x, op0=nl.subtract, operand0=mean, op1=nl.multiply, operand1=rstd)
        y = normalised * gamma_b + beta_b

        nl.store(output_tensor[i * P + i_p, i_f], value=y, mask=(i * P + i_p < rows))
    return output_tensor


# input [rows, cols], epsilon, gamma [cols], beta [cols]
EXAMPLES = {"layernorm": (("1024x2048", 1e-5, (2048,), (2048,)), {"dtype": "f32"}),
            "layernorm_v2": (("1024x2048", 1e-5, (2048,), (2048,)), {"dtype": "f32"})}

if __name__ == "__main__":
    import tandem

    args, kwargs = EXAMPLES["layernorm"]
    r = tandem.simulate(layernorm, *args, **kwargs)
    loop = r.loop()
    print(f"layernorm: {r.total_ns:.1f} ns; row loop II {loop.ii_ns:.1f} ns (bound {loop.ii_bound_ns:.1f}, "
          f"{loop.bound_resource}), DMA overlapped {100 * loop.overlap:.1f}%")
