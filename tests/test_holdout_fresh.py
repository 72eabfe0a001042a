"""H200 workloads timed in a process that never ran a profiler (``traceinspect profile``'s
default since the fresh-process timing; the sets below), checked with the built-in model.

* ``holdout2_fresh``: the eight ``holdout2_workloads`` recorded again. In the same run the
  profiled process measured the same graphs 25-39 % slower (kept in ``results.json`` under
  ``in_profiled_process``): what had looked like a slower machine in ``holdout2_rerun``.
* ``holdout4``: eight new families (ViT, UNet, Llama decode, wav2vec2 front end, DLRM,
  DCGAN, MBConv with SE, an RMSprop loop), recorded after the clean calibration was frozen
  (56f6ca0): graphed within ±10 % on 7 of 8 then, the RMSprop loop −29 % (80 input copies
  charged 1.3 µs each; 5.6 µs measured). The warm-copy cost that fixed it came from
  ``replay_parts.json``, not from this set (−9.9 % then). The per-node extra fitted later
  on the 64 fresh-process replays (100 ns instead of 200) takes 40 µs off its 400 nodes:
  −12.8 %, a miss again.
* ``holdout5``: eight more families (GPT-2 prefill, GCN message passing, MLP-Mixer, LM
  head with top-k, a whole CNN training step, Swin windows, an FPN head, two towers on two
  streams), recorded only after the model was frozen again (c6a7e41) and never fitted on;
  ``holdout5_rerun``: the same eight on another H200 machine 12 minutes later, whose host
  is faster (a tiny launch from Python 6.2 µs against 7.8): the same graphs replayed 0-14 %
  faster there (``lm_head_topk_b8`` 125.3 vs 146.5 µs). The one miss of each was the LM
  head on the first (−16.8 %, −3.1 % there) and the two towers on the second (+9.3 %,
  +16.6 % there), then read as the second tower waiting for the first. The multi-stream
  replay model that came after (a ``wait_stream`` fork read as one; nodes of several
  streams starting as the device has room for them) was checked on these two rows among
  others, so they are no longer held out from it: the towers now come −5.8 % and +0.5 %,
  and the LM head is the one miss, on the first machine only (−17.7 %). The per-node extra
  and the copy transition (a kernel after a memcpy or memset node) were fitted on the 64
  fresh-process replays, these sets among them.
"""

from __future__ import annotations

import json
import statistics
import sys

import pytest
from conftest import (
    ROOT,
    SAMPLES,
    assert_row_classified,
    assert_row_matches,
    step_verdicts_agreeing_with_replay,
)

sys.path.insert(0, str(ROOT / "bench"))

from validation_table import ValidationRow, validate_folder, validation_workloads  # noqa: E402

VALIDATION = SAMPLES / "validation"

# set -> workload -> (measured graphed p50 µs, predicted µs, measured saving, predicted saving)
EXPECTED: dict[str, dict[str, tuple[float, float, float, float]]] = {
    "holdout2_fresh": {
        "adamw_foreach": (935.7, 950.0, 0.6820, 0.7336),  # +1.5 %
        "bottleneck_b4": (551.7, 558.8, 0.7414, 0.7448),  # +1.3 %
        "compiled_swiglu": (153.6, 145.2, 0.7885, 0.8017),  # −5.5 %
        "decoder_b8": (626.0, 620.0, 0.7987, 0.8345),  # −1.0 %
        "embbag_small": (110.0, 110.7, 0.7676, 0.7862),  # +0.6 %
        # −8.6 % (−12.2 % while the input copy hid the replay's latency): its two branches,
        # forked from the current stream (read before as the second waiting for the first),
        # have GEMMs that each fill 0.97 of the device; they run one after the other, the
        # GELUs (0.49) side by side
        "fork_join_streams": (102.3, 93.4, 0.5988, 0.6168),
        "lstm_b64": (832.7, 853.2, 0.7885, 0.7082),  # +2.5 %
        "mlp_silu_wide": (285.6, 279.0, 0.6774, 0.6651),  # −2.3 %
    },
    "holdout4": {
        "conv1d_audio_b8": (629.7, 609.6, 0.2715, 0.2355),  # −3.2 %
        "dcgan_gen_b16": (193.0, 192.9, 0.6839, 0.7438),  # −0.1 %
        "dlrm_b128": (126.5, 132.6, 0.7340, 0.7400),  # +4.8 %
        "mbconv_se_b32": (793.2, 811.5, 0.7960, 0.6869),  # +2.3 %
        "rmsnorm_llama_decode_b1": (834.8, 779.9, 0.8601, 0.8155),  # −6.6 %
        "rmsprop_loop": (1383.7, 1483.2, 0.5760, 0.6929),  # +7.2 %
        "unet_block_b2": (367.9, 393.8, 0.7093, 0.7115),  # +7.0 %
        "vit_b4": (341.5, 341.8, 0.7780, 0.8028),  # +0.1 %
    },
    "holdout5": {
        "cnn_train_step_b32": (699.7, 689.5, 0.7384, 0.6615),  # −1.5 %
        "dual_tower_streams_b4": (156.7, 155.3, 0.8416, 0.7939),  # −0.9 %
        "fpn_head_b2": (1120.8, 1157.7, 0.6152, 0.7008),  # +3.3 %
        "gcn_scatter_b1": (884.5, 884.2, 0.0373, 0.0114),  # −0.0 %
        "gpt2_prefill_b1": (242.9, 239.8, 0.8038, 0.7855),  # −1.3 %
        "lm_head_topk_b8": (146.5, 128.4, 0.7238, 0.6758),  # −12.4 %
        "mlp_mixer_b8": (424.3, 454.3, 0.7146, 0.7986),  # +7.1 %
        "swin_window_attn_b2": (406.3, 431.9, 0.7554, 0.7556),  # +6.3 %
    },
    "holdout5_rerun": {
        "cnn_train_step_b32": (692.1, 680.8, 0.6247, 0.6629),  # −1.6 %
        "dual_tower_streams_b4": (146.7, 152.1, 0.7803, 0.7483),  # +3.7 %
        "fpn_head_b2": (1103.1, 1147.0, 0.4121, 0.4269),  # +4.0 %
        "gcn_scatter_b1": (876.9, 881.0, 0.0411, -0.0102),  # +0.5 %
        "gpt2_prefill_b1": (239.0, 236.5, 0.6794, 0.6749),  # −1.0 %
        "lm_head_topk_b8": (125.3, 124.9, 0.3726, 0.5913),  # −0.3 %
        "mlp_mixer_b8": (419.3, 448.2, 0.6392, 0.6005),  # +6.9 %
        "swin_window_attn_b2": (400.0, 429.5, 0.6718, 0.6715),  # +7.4 %
    },
}
#: Outside ±10 %, by set: the fork/join of two streams (102.3 µs measured, 89.8 predicted);
#: the RMSprop loop (1,383.7 µs measured, read −12.5 % while its 80 input copies were
#: charged 5.6 µs each, within ±10 % at 9.2 µs);
#: the LM head's top-k (a 28-kernel chain of one-block kernels and two memsets: 146.5 µs
#: measured on a machine with a slow host, 120.6 predicted; 125.3 on the next machine).
#: The embedding-bag step, −10.9 % with 200 ns per node, is −9.9 % (99.1 µs against 110.0)
#: with 100 ns and the 2 µs copy transition. The two towers on two streams, +16.6 % on the
#: faster machine while the second was read as waiting for the first, are +0.5 % there now.
#: The fork/join read −10.6 % (91.4 µs) since its input copy is charged at its trace's
#: host pace (launch calls a median 4.9 µs: 6.2 µs per copy; −7.5 % at the built-in 9.2),
#: −8.7 % (93.4 µs) since a light kernel beside another stream's is charged LIGHT_BESIDE_NS.
GRAPHED_MISSES = {
    "holdout5": {"lm_head_topk_b8"},
}
#: Every measured time lies inside its range. The fork/join of two streams was above it
#: (102.3 µs against 83.5-100.6, −12.2 %) while the input copy hid the replay's latency:
#: inside 82.3-107.2 now.
OUTSIDE_RANGE: dict[str, set[str]] = {}
#: Saving more than 15 points off without --eager-us, by set: the RMSprop loop's eager time
#: from its trace is 56 % high (a Python loop of 400 launches whose profiled host time the
#: model deflates too little), within 15 points of its saving now that each of its 80 input
#: copies costs the built-in 9.2 µs; the LM head on the faster machine
#: (+21.9 points), whose eager step took 200 µs there (530 µs on the other) while its trace
#: gives 332 µs. The FPN head on the first machine (+15.1 points with 8 µs per profiled
#: operator: its eager time from the trace 67 % high) is +8.6 now (33 % high).
SAVING_MISSES = {
    "holdout5_rerun": {"lm_head_topk_b8"},
}


@pytest.fixture(scope="module")
def rows() -> dict[str, dict[str, ValidationRow]]:
    return {name: validate_folder(VALIDATION / name) for name in EXPECTED}


def _cases() -> list[tuple[str, str]]:
    return [(s, w) for s, by_name in EXPECTED.items() for w in sorted(by_name)]


def test_every_fresh_workload_is_checked(rows: dict[str, dict[str, ValidationRow]]) -> None:
    for name, expected in EXPECTED.items():
        assert set(rows[name]) == set(expected), name


@pytest.mark.parametrize(("recording", "name"), _cases())
def test_fresh_process_prediction(
    recording: str, name: str, rows: dict[str, dict[str, ValidationRow]]
) -> None:
    row = rows[recording][name]
    assert_row_matches(row, EXPECTED[recording][name])
    assert_row_classified(
        row,
        graphed_miss=name in GRAPHED_MISSES.get(recording, ()),
        outside_range=name in OUTSIDE_RANGE.get(recording, ()),
        saving_miss=name in SAVING_MISSES.get(recording, ()),
    )


@pytest.mark.parametrize(
    ("recording", "within", "median_error"),
    [("holdout5", 7, 0.0238), ("holdout5_rerun", 8, 0.0265)],
)
def test_holdout5_summary(
    recording: str, within: int, median_error: float, rows: dict[str, dict[str, ValidationRow]]
) -> None:
    """The set recorded after the last freeze, on two machines: 7 and 8 of 8 within ±10 %,
    median |error| 3.0 % and 3.0 % (7 of 8 on each, 6.0 % and 4.1 %, before the multi-stream
    replay model, which was checked on the two-tower rows; 4.6 % and 3.4 % with it and 200 ns
    per node)."""
    errors = [abs(r.error_frac) for r in rows[recording].values()]
    assert sum(e <= 0.10 for e in errors) == within
    assert statistics.median(errors) == pytest.approx(median_error, abs=0.001)


#: The median workload's graphed replay: profiled process over fresh one.
MEDIAN_RATIO = 1.195


def test_the_profiled_process_measured_the_same_graphs_slower() -> None:
    # GIVEN the fresh-process timings and, kept beside them, the profiled process's
    ratios = []
    for recording in EXPECTED:
        for results in sorted((VALIDATION / recording).glob("*/results.json")):
            data = json.loads(results.read_text())
            assert data["options"]["timing_process"] == "fresh"
            (graphed,) = [r for r in data["rows"] if r["mode"] == "graphed"]
            before = graphed["in_profiled_process"]["host_p50_ns"]
            ratios.append(before / graphed["host_p50_ns"])
    # THEN every graph replayed faster in the fresh process, by 2-52 % (mbconv_se_b32: 793.2
    # vs 809.3 µs; rmsprop_loop: 1,383.7 vs 2,100.7 µs)
    assert len(ratios) == 32
    assert 1.02 <= min(ratios) and max(ratios) <= 1.52
    assert statistics.median(ratios) == pytest.approx(MEDIAN_RATIO, abs=0.001)


def test_fresh_process_verdicts_agree_with_what_replay_did() -> None:
    """On the 38 fresh-process recordings (the four sets and holdout3_fresh) each step's
    verdict agrees with the saving replay measurably brought, and no region's verdict
    contradicts its predicted saving."""
    workloads = [
        w for name in (*EXPECTED, "holdout3_fresh") for w in validation_workloads(VALIDATION / name)
    ]
    assert len(workloads) == 38
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 36, "compute-bound": 2}
