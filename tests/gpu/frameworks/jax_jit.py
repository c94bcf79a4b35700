"""JAX jit functions run through XLA command buffers (CUDA graphs),
self-checking against NumPy (tests/gpu/frameworks).

XLA builds its graphs itself through the driver API (explicit nodes,
cuStreamBeginCaptureToGraph for library calls). XLA_FLAGS
--xla_gpu_graph_min_graph_size=1 makes it use graphs even for these small
programs. Exit 0 = OK, 1 = wrong result, 77 = no JAX/GPU here. Run
unchanged under LD_PRELOAD=libsgcap.so.
"""
import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_gpu_graph_min_graph_size=1")
try:
    import jax
    import jax.numpy as jnp
    import numpy as np
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"jax_jit: skip: {e}")
    sys.exit(77)
try:
    if not any(d.platform == "gpu" for d in jax.devices()):
        raise RuntimeError("no GPU device")
except Exception as e:  # noqa: BLE001 - any failure here means no GPU
    print(f"jax_jit: skip: {e}")
    sys.exit(77)


@jax.jit
def pointwise(x, y):
    return jnp.sin(x) * y + jnp.cos(y) * 0.5


@jax.jit
def mlp(x, w1, w2):
    h = jnp.tanh(x @ w1)
    return jnp.sum(h @ w2, axis=0)


def main():
    rng = np.random.default_rng(0)
    ok = True
    for i in range(4):
        x = rng.standard_normal(1 << 16).astype(np.float32)
        y = rng.standard_normal(1 << 16).astype(np.float32)
        got = np.asarray(pointwise(x, y))
        want = np.sin(x) * y + np.cos(y) * 0.5
        if not np.allclose(got, want, rtol=1e-5, atol=1e-5):
            print(f"jax_jit: pointwise FAIL (call {i}, max error {np.abs(got - want).max():.3g})")
            ok = False
    for i in range(4):
        x = rng.standard_normal((128, 64)).astype(np.float32)
        w1 = rng.standard_normal((64, 96)).astype(np.float32) * 0.1
        w2 = rng.standard_normal((96, 32)).astype(np.float32) * 0.1
        got = np.asarray(mlp(x, w1, w2))
        want = np.sum(np.tanh(x.astype(np.float64) @ w1) @ w2, axis=0)
        err = np.abs(got - want).max() / max(1.0, np.abs(want).max())
        if not err < 2e-2:  # XLA may use TF32 for the products
            print(f"jax_jit: mlp FAIL (call {i}, relative error {err:.3g})")
            ok = False
    print(f"jax_jit: {'OK' if ok else 'FAIL'} (pointwise and mlp, 4 calls each)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
