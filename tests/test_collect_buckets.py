"""Bucket assignment, bucket-set evaluation and the recommendation rule (pure functions)."""

from __future__ import annotations

import pytest

from traceinspect.collect.buckets import (
    evaluate_bucket_set,
    normalize_mix,
    recommend_buckets,
    serving_bucket,
)
from traceinspect.collect.replay import nearest_rank, request_sequence, trace_name

# A launch-bound callable: replay costs ~100-200 µs, eager 300-450 µs; a private pool per
# bucket of 1 MB per row.
MIX = {1: 6.0, 3: 3.0, 8: 1.0}
GRAPHED = {1: 100_000, 2: 110_000, 4: 130_000, 8: 200_000}
EAGER = {1: 300_000, 2: 320_000, 3: 330_000, 4: 350_000, 8: 450_000}
POOL = {1: 1_000_000, 2: 2_000_000, 4: 4_000_000, 8: 8_000_000}


def test_normalize_mix_from_observed_sizes_and_weights() -> None:
    assert normalize_mix([3, 1, 3, 8, 1, 1]) == {1: 3.0, 3: 2.0, 8: 1.0}
    assert normalize_mix({4: 1, 2: 0.5}) == {2: 0.5, 4: 1.0}


@pytest.mark.parametrize(
    "mix",
    [{0: 1.0}, {2: 0}, {2: -1.0}, {2: float("nan")}, [], [1.5], {True: 1.0}, {2: "often"}],
)
def test_normalize_mix_rejects_bad_input(mix: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        normalize_mix(mix)  # type: ignore[arg-type]


def test_serving_bucket_is_the_smallest_that_fits() -> None:
    assert serving_bucket(3, [1, 2, 4, 8]) == 4
    assert serving_bucket(4, [8, 4]) == 4
    assert serving_bucket(9, [1, 2, 4, 8]) is None
    assert serving_bucket(1, []) is None


def test_evaluate_bucket_set_exact_values() -> None:
    # GIVEN buckets 1, 4, 8: size 1 -> b1, size 3 -> b4 (1 padded row), size 8 -> b8
    est = evaluate_bucket_set([8, 1, 4], MIX, GRAPHED, EAGER, POOL)
    # THEN latency = (6*100 + 3*130 + 1*200) / 10 µs; padding = 3*1 / (6*1 + 3*4 + 1*8)
    assert est.buckets == (1, 4, 8)
    assert est.expected_latency_ns == 119_000
    assert est.fallback_share == 0.0
    assert est.padding_share == 3 / 26
    assert est.graph_memory_bytes == 13_000_000


def test_evaluate_bucket_set_with_fallback_and_no_graphs() -> None:
    est = evaluate_bucket_set([1, 4], MIX, GRAPHED, EAGER, POOL)
    assert est.expected_latency_ns == (6 * 100_000 + 3 * 130_000 + 450_000) / 10  # 144 µs
    assert est.fallback_share == 0.1
    eager_only = evaluate_bucket_set([], MIX, GRAPHED, EAGER, POOL)
    assert eager_only.expected_latency_ns == 324_000
    assert eager_only.fallback_share == 1.0
    assert eager_only.padding_share is None
    assert eager_only.graph_memory_bytes == 0


def test_evaluate_bucket_set_keeps_unknowns_null() -> None:
    # The eager latency at size 8 was never measured: the expectation is unknown, not guessed.
    est = evaluate_bucket_set([1, 4], MIX, GRAPHED, {1: 300_000, 3: 330_000}, {1: None, 4: 1})
    assert est.expected_latency_ns is None
    assert est.graph_memory_bytes is None
    assert est.fallback_share == 0.1  # still known: it depends only on the mix


def test_recommend_buckets_picks_lowest_latency_then_least_memory() -> None:
    rec = recommend_buckets(MIX, GRAPHED, EAGER, POOL)
    # (1,4,8) and (1,2,4,8) both give 119 µs; bucket 2 serves nothing here, so the
    # smaller set wins on memory (13 MB vs 15 MB).
    assert rec.chosen is not None
    assert rec.chosen.buckets == (1, 4, 8)
    assert rec.evaluated == 16  # every subset of four buckets, the empty one included
    shown = {s.buckets: s.expected_latency_ns for s in rec.shown}
    # Best set of each size: none 324, (4) 162, (4,8) 137, (1,4,8) 119, all 119 µs.
    assert shown == {
        (): 324_000,
        (4,): 162_000,
        (4, 8): 137_000,
        (1, 4, 8): 119_000,
        (1, 2, 4, 8): 119_000,
    }


def test_recommend_buckets_tie_goes_to_less_memory() -> None:
    # (1,2) is 100.5 µs with 4 MB; (2) alone is 101 µs (within 2 %) with 1 MB: (2) wins.
    rec = recommend_buckets(
        {1: 1.0, 2: 1.0},
        {1: 100_000, 2: 101_000},
        {1: 500_000, 2: 500_000},
        {1: 3_000_000, 2: 1_000_000},
    )
    assert rec.chosen is not None
    assert rec.chosen.buckets == (2,)
    assert rec.chosen.padding_share == 0.25  # size 1 padded to 2: 1 of 4 rows


def test_recommend_buckets_ignores_failed_captures() -> None:
    # Bucket 4's capture failed (no graphed latency): no set may contain it.
    rec = recommend_buckets(MIX, {**GRAPHED, 4: None}, EAGER, POOL)
    assert rec.chosen is not None
    assert rec.chosen.buckets == (1, 8)  # (600 + 3*200 + 200) / 10 = 140 µs
    assert rec.chosen.expected_latency_ns == 140_000
    assert all(4 not in s.buckets for s in rec.shown)
    assert rec.evaluated == 8


def test_recommend_buckets_without_known_latency_picks_nothing() -> None:
    rec = recommend_buckets({1: 1.0, 16: 1.0}, {1: None}, {}, {})
    assert rec.chosen is None
    assert [s.buckets for s in rec.shown] == [()]


def test_request_sequence_keeps_proportions_and_is_reproducible() -> None:
    seq = request_sequence(MIX, 200)
    assert (seq.count(1), seq.count(3), seq.count(8)) == (120, 60, 20)
    assert seq == request_sequence(MIX, 200)
    assert seq != sorted(seq)  # shuffled
    # Largest remainders: 7 requests over 6:3:1 -> 4.2, 2.1, 0.7 -> 4, 2, 1
    small = request_sequence(MIX, 7)
    assert (small.count(1), small.count(3), small.count(8)) == (4, 2, 1)


def test_nearest_rank_percentiles() -> None:
    values = list(range(100, 0, -1))  # 1..100, unsorted
    assert nearest_rank(values, 0.50) == 50
    assert nearest_rank(values, 0.95) == 95  # not 96: 0.95 * 100 is not exactly 95 in binary
    assert nearest_rank([7], 0.95) == 7
    assert nearest_rank([1, 2, 3], 0.5) == 2


def test_trace_name_is_a_safe_file_name() -> None:
    assert trace_name("mlp", 4, "eager") == "mlp.b4.eager.json.gz"
    assert trace_name("../dec ode", None, "graphed") == "dec_ode.bx.graphed.json.gz"


def test_outputs_compared_with_the_dtypes_tolerance() -> None:
    torch = pytest.importorskip("torch")
    from traceinspect.collect.tensors import compare_outputs as _compare

    want = [torch.ones(4), torch.arange(3)]
    # Exactly equal outputs (a tuple, as a callable would return them)
    assert _compare(want, (torch.ones(4), torch.arange(3)), torch) == (
        True,
        0.0,
        "float32 rtol=1.3e-06 atol=1e-05; int64 exact",
    )
    # 1e-3 off in float32 is beyond rtol 1.3e-6 + atol 1e-5
    correct, error, _ = _compare(want, [torch.ones(4) + 1e-3, torch.arange(3)], torch)
    assert correct is False
    assert error == pytest.approx(1e-3, rel=1e-3)
    # bfloat16 allows 1.6e-2 relative: 1 + 2**-8 passes
    bf = torch.ones(2, dtype=torch.bfloat16)
    assert _compare([bf], bf + 2**-8, torch)[0] is True
    # A different structure is incorrect; no tensors at all is unknown
    assert _compare(want, torch.ones(4), torch) == (False, None, None)
    assert _compare([], "not a tensor", torch) == (None, None, None)


def test_inputs_resized_and_rotated_along_the_batch_dim() -> None:
    torch = pytest.importorskip("torch")
    from traceinspect.collect.tensors import resize as _resize
    from traceinspect.collect.tensors import rotate as _rotate

    x = torch.tensor([[1, 1], [2, 2], [3, 3]])
    assert _resize(x, 5, 0, torch).tolist() == [[1, 1], [2, 2], [3, 3], [1, 1], [2, 2]]
    assert _resize(x, 2, 0, torch).tolist() == [[1, 1], [2, 2]]
    assert _resize(x, 4, 1, torch).tolist() == [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]
    assert _resize(7, 4, 0, torch) == 7  # not a tensor: passed as is
    assert _rotate(x, 0, torch).tolist() == [[3, 3], [1, 1], [2, 2]]
    assert _rotate(torch.tensor(5.0), 0, torch).item() == 5.0  # no batch dim: unchanged
    assert _rotate(x, 0, torch, 3).tolist() == [[3, 3], [1, 1], [2, 2]]  # the batch's length


def test_an_input_whose_leading_dimension_is_not_the_batch_is_not_rotated() -> None:
    """A heterogeneous graph's (2, E) edge list of (user, movie) pairs beside a batch of
    3,706 movies' features: rolled along its first dimension, its user row would index the
    movie table (``holdout56``'s GraphSAGE step failed so, a device-side assert on both
    recordings); only the tensors whose first dimension is the batch get new rows."""
    torch = pytest.importorskip("torch")
    from traceinspect.collect.tensors import batch_size, resize, rotate

    users, movies = 6040, 3706
    features = torch.rand(movies, 18)
    pairs = torch.stack((torch.randint(0, users, (8,)), torch.randint(0, movies, (8,))))
    inputs = (features, pairs)
    batch = batch_size(inputs, 0)
    rotated = [rotate(x, 0, torch, batch) for x in inputs]
    assert batch == movies
    assert torch.equal(rotated[0], torch.roll(features, 1, 0))
    assert rotated[1] is pairs
    assert int(rotated[1][1].max()) < movies
    # nor resized to a bucket: the features get 4,096 rows, the edge list keeps its two
    resized = [resize(x, 4096, 0, torch, batch) for x in inputs]
    assert resized[0].shape == (4096, 18) and resized[1] is pairs


def test_resized_and_rotated_inputs_keep_their_memory_format() -> None:
    """A channels-last image batch rotated for the eager run (or resized to a bucket) stays
    channels-last: made contiguous, the eager run timed and traced a layout copy and a slow
    mixed-layout add the captured graph (whose static inputs keep the layout) did not run.
    ``h100_holdout46``'s ResNet bottlenecks (channels-last input) read +15.4 % so: its eager
    trace ran a 85 µs ``aten::copy_`` and a 93 µs ``aten::add`` a step that its replay ran as
    one 25 µs vectorized add."""
    torch = pytest.importorskip("torch")
    from traceinspect.collect.tensors import memory_format, resize, rotate

    x = torch.arange(2 * 3 * 4 * 5.0).reshape(2, 3, 4, 5).to(memory_format=torch.channels_last)
    for out in (rotate(x, 0, torch), resize(x, 3, 0, torch)):
        assert out.is_contiguous(memory_format=torch.channels_last)
        assert not out.is_contiguous()
    assert torch.equal(rotate(x, 0, torch), torch.roll(x, 1, 0))
    assert torch.equal(resize(x, 3, 0, torch)[2], x[0])
    v = torch.zeros(2, 3, 2, 4, 5).to(memory_format=torch.channels_last_3d)
    assert rotate(v, 0, torch).is_contiguous(memory_format=torch.channels_last_3d)
    # plain tensors stay plain; a (N, 1, H, W) batch is both, and stays contiguous
    assert memory_format(torch.zeros(2, 3, 4, 5), torch) == torch.contiguous_format
    assert memory_format(torch.zeros(2, 1, 4, 5), torch) == torch.contiguous_format
    assert rotate(torch.zeros(2, 3, 4, 5).transpose(1, 2), 0, torch).is_contiguous()
