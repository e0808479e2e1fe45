"""Tests for attention_course/decoder/quantized.py: absmax codes within their stated error bounds, measured against
float64, and a cache the decoder runs with."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_course import scaled_dot_product_attention
from attention_course.decoder import KVCache, QuantizedKVCache, attention_error_bound, quantize, random_decoder

E4M3_VALUES = np.sort(np.unique(np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)))
E4M3_VALUES = E4M3_VALUES[np.isfinite(E4M3_VALUES)]


@settings(max_examples=80, deadline=None)
@given(dtype=st.sampled_from(["int8", "float8_e4m3fn"]), axis=st.sampled_from([-1, -2]),
       log_scale=st.floats(-30, 30), outlier=st.floats(1, 100), n=st.integers(1, 20), seed=st.integers(0, 2**16))
def test_every_number_is_within_its_stated_bound(dtype, axis, log_scale, outlier, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, n, 7)) * np.exp(log_scale)
    x[..., 3] *= outlier  # a channel larger than the others, as keys have
    q = quantize(x, dtype, axis)
    error = np.abs(x - q.dequantize())  # against the float64 numbers
    assert np.all(error <= q.error_bound())
    assert q.codes.dtype == np.dtype(np.int8 if dtype == "int8" else ml_dtypes.float8_e4m3fn)
    largest = 127 if dtype == "int8" else 448
    assert np.all(np.abs(q.codes.astype(np.float64)) <= largest)  # never clipped
    assert q.scale.dtype == np.float32 and q.scale.shape[axis] == 1


def test_the_int8_bound_is_half_a_step_and_is_reached():
    x = np.array([[127.0, -63.5, 32.5, 10.25]])  # scale 1: -63.5 and 32.5 sit half a step from two codes
    q = quantize(x, "int8")
    assert q.scale[0, 0] == 1.0
    assert q.codes.tolist() == [[127, -64, 32, 10]]  # ties round to even
    assert q.error_bound().tolist() == [[0.5] * 4]
    assert np.abs(x - q.dequantize()).max() == 0.5  # the bound is reached


def test_float8_codes_are_the_nearest_e4m3_numbers():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-1, 1, 5000), rng.uniform(-1e-3, 1e-3, 5000), [1.0]])[None, :]
    q = quantize(x, "float8_e4m3fn")
    y = x / q.scale.astype(np.float64)  # the numbers the codes round
    codes = q.codes.astype(np.float64)
    idx = np.searchsorted(E4M3_VALUES, y)
    lower, upper = E4M3_VALUES[np.clip(idx - 1, 0, None)], E4M3_VALUES[np.clip(idx, None, len(E4M3_VALUES) - 1)]
    nearest = np.minimum(np.abs(y - lower), np.abs(y - upper))
    np.testing.assert_array_equal(np.abs(y - codes), nearest)  # round to nearest: no code is further than needed
    assert np.all(np.abs(y - codes) <= np.maximum(np.abs(codes) / 16, 2.0**-10))  # the stated bound, in code units


def test_an_all_zero_group_stays_zero_and_bad_input_is_refused():
    q = quantize(np.zeros((2, 3)), "int8")
    assert np.all(q.dequantize() == 0) and np.all(q.error_bound() == 0)
    with pytest.raises(ValueError, match="finite"):
        quantize(np.array([1.0, np.inf]))
    with pytest.raises(ValueError, match="dtype must be one of"):
        quantize(np.ones(3), "int4")
    with pytest.raises(ValueError, match="axis"):
        quantize(np.ones((2, 3)), axis=2)


@pytest.mark.parametrize("dtype", ["int8", "float8_e4m3fn"])
@pytest.mark.parametrize(("key_axis", "value_axis"), [("channel", "token"), ("token", "token"), ("channel", "channel")])
def test_the_cache_holds_codes_within_their_bounds_and_counts_their_bytes(dtype, key_axis, value_axis):
    rng = np.random.default_rng(1)
    cache = QuantizedKVCache(2, dtype, key_axis=key_axis, value_axis=value_axis, group_size=8)
    exact = KVCache(2)
    for n in (5, 1, 1, 7, 3, 1, 1, 1):  # 20 tokens: two full groups of 8 and 4 waiting
        k, v = rng.standard_normal((2, 2, n, 16))
        exact.update(0, k, v)
        keys, values = cache.update(0, k, v)
        assert keys.shape == exact.keys(0).shape and keys.dtype == np.float64
    kb, vb = cache.error_bounds(0)
    assert np.all(np.abs(cache.keys(0) - exact.keys(0)) <= kb)
    assert np.all(np.abs(cache.values(0) - exact.values(0)) <= vb)

    def bytes_of(axis):  # codes (1 byte) and float32 scales, for the 2 heads x 20 tokens x 16 channels
        if axis == "token":
            return 2 * 20 * 16 + 2 * 20 * 4
        return 2 * 16 * 16 + 2 * 2 * 16 * 4 + 2 * 4 * 16 * 8  # two groups quantized; 4 tokens waiting, in float64

    assert cache.nbytes == bytes_of(key_axis) + bytes_of(value_axis)
    if key_axis == "channel":
        assert np.all(kb[:, 16:] == 0) and np.array_equal(cache.keys(0)[:, 16:], exact.keys(0)[:, 16:])  # waiting: exact
    assert "keys per " + key_axis in repr(cache)


def test_per_channel_keys_are_closer_than_per_token_when_a_channel_is_large():
    rng = np.random.default_rng(2)
    k = rng.standard_normal((2, 64, 32))
    k[..., 5] *= 30  # an outlier channel in every token
    errors = {}
    for axis in ("token", "channel"):
        cache = QuantizedKVCache(1, "int8", key_axis=axis, group_size=32)
        keys, _ = cache.update(0, k, k)
        errors[axis] = np.abs(keys - k)[..., np.arange(32) != 5].mean()  # the ordinary channels
    assert errors["channel"] < errors["token"] / 5


@pytest.mark.parametrize("dtype", ["int8", "float8_e4m3fn"])
def test_attention_over_the_quantized_cache_stays_within_the_stated_bound(dtype):
    rng = np.random.default_rng(3)
    for trial in range(20):
        cache = QuantizedKVCache(1, dtype, group_size=8)
        k = rng.standard_normal((2, 37, 16)) * (1 + 10 * (trial % 3 == 0))
        v = rng.standard_normal((2, 37, 16))
        keys, values = cache.update(0, k, v)
        q = rng.standard_normal((4, 1, 16)) * (1 + trial)
        exact = scaled_dot_product_attention(q, k, v, enable_gqa=True)  # float64
        quantized = scaled_dot_product_attention(q, keys, values, enable_gqa=True)
        bound = attention_error_bound(q, keys, values, *cache.error_bounds(0))
        assert np.all(np.abs(exact - quantized) <= bound)


def test_the_decoder_runs_with_a_quantized_cache_and_its_logits_stay_close():
    model = random_decoder(np.random.default_rng(4), n_layers=2, n_heads=4, n_kv_heads=2, window=6)
    ids = np.random.default_rng(5).integers(0, 64, 30)
    exact, cache = model.new_cache(keep_window=True), QuantizedKVCache(2, "int8", window=model.config.windows, group_size=4)
    model.forward(ids[:10], exact)
    model.forward(ids[:10], cache)
    for t in ids[10:]:
        a = model.forward([t], exact).logits
        b = model.forward([t], cache).logits
        assert np.abs(a - b).max() < 0.05
    assert cache.kept(0) == exact.kept(0) == 5
    assert cache.nbytes < exact.nbytes / 2


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="key_axis must be one of"):
        QuantizedKVCache(1, key_axis="row")
    with pytest.raises(ValueError, match="dtype must be one of"):
        QuantizedKVCache(1, dtype="float16")
    with pytest.raises(ValueError, match="holds no token"):
        QuantizedKVCache(1).error_bounds(0)
    with pytest.raises(ValueError, match="h_q a multiple of h_kv"):
        attention_error_bound(np.ones((3, 1, 4)), *(np.ones((2, 5, 4)),) * 4)
