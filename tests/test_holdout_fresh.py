"""H200 workloads timed in a process that never ran a profiler (``traceinspect profile``'s
default since the fresh-process timing; the sets below), checked with the built-in model.

* ``holdout2_fresh``: the eight ``holdout2_workloads`` recorded again. In the same run the
  profiled process measured the same graphs 25-39 % slower (kept in ``results.json`` under
  ``in_profiled_process``): what had looked like a slower machine in ``holdout2_rerun``.
* ``holdout4``: eight new families (ViT, UNet, Llama decode, wav2vec2 front end, DLRM,
  DCGAN, MBConv with SE, an RMSprop loop), recorded after the clean calibration was frozen
  (56f6ca0): graphed within ±10 % on 7 of 8 then, the RMSprop loop −29 % (80 input copies
  charged 1.3 µs each; 5.6 µs measured). The warm-copy cost that fixed it came from
  ``replay_parts.json``, not from this set.
* ``holdout5``: eight more families (GPT-2 prefill, GCN message passing, MLP-Mixer, LM
  head with top-k, a whole CNN training step, Swin windows, an FPN head, two towers on two
  streams), recorded only after the model was frozen again (c6a7e41) and never fitted on;
  ``holdout5_rerun``: the same eight on another H200 machine 12 minutes later, whose host
  is faster (a tiny launch from Python 6.2 µs against 7.8): the same graphs replayed 0-14 %
  faster there (``lm_head_topk_b8`` 125.3 vs 146.5 µs), and the one miss moved from the LM
  head (−16.8 %, −3.1 % there) to the two towers (+9.3 %, +16.6 % there).
"""

from __future__ import annotations

import json
import statistics
import sys

import pytest
from conftest import ROOT, SAMPLES, assert_row_matches, step_verdicts_agreeing_with_replay

sys.path.insert(0, str(ROOT / "bench"))

from validation_table import ValidationRow, validate_folder, validation_workloads  # noqa: E402

VALIDATION = SAMPLES / "validation"

# set -> workload -> (measured graphed p50 µs, predicted µs, measured saving, predicted saving)
EXPECTED: dict[str, dict[str, tuple[float, float, float, float]]] = {
    "holdout2_fresh": {
        "adamw_foreach": (935.7, 972.2, 0.6820, 0.7484),  # +3.9 %
        "bottleneck_b4": (551.7, 565.6, 0.7414, 0.7485),  # +2.5 %
        "compiled_swiglu": (153.6, 143.6, 0.7885, 0.8395),  # −6.5 %
        "decoder_b8": (626.0, 632.0, 0.7987, 0.8333),  # +1.0 %
        "embbag_small": (110.0, 98.0, 0.7676, 0.8468),  # −10.9 %
        "fork_join_streams": (102.3, 105.3, 0.5988, 0.6470),  # +2.9 %
        "lstm_b64": (832.7, 869.1, 0.7885, 0.7075),  # +4.4 %
        "mlp_silu_wide": (285.6, 280.4, 0.6774, 0.6674),  # −1.8 %
    },
    "holdout4": {
        "conv1d_audio_b8": (629.7, 604.0, 0.2715, 0.3868),  # −4.1 %
        "dcgan_gen_b16": (193.0, 178.5, 0.6839, 0.7930),  # −7.5 %
        "dlrm_b128": (126.5, 125.5, 0.7340, 0.7529),  # −0.8 %
        "mbconv_se_b32": (793.2, 819.4, 0.7960, 0.7065),  # +3.3 %
        "rmsnorm_llama_decode_b1": (834.8, 805.8, 0.8601, 0.8132),  # −3.5 %
        "rmsprop_loop": (1383.7, 1246.4, 0.5760, 0.7622),  # −9.9 %
        "unet_block_b2": (367.9, 399.3, 0.7093, 0.7339),  # +8.5 %
        "vit_b4": (341.5, 332.6, 0.7780, 0.8217),  # −2.6 %
    },
    "holdout5": {
        "cnn_train_step_b32": (699.7, 683.4, 0.7384, 0.7685),  # −2.3 %
        "dual_tower_streams_b4": (156.7, 171.3, 0.8416, 0.8057),  # +9.3 %
        "fpn_head_b2": (1120.8, 1152.5, 0.6152, 0.7631),  # +2.8 %
        "gcn_scatter_b1": (884.5, 880.9, 0.0373, 0.0391),  # −0.4 %
        "gpt2_prefill_b1": (242.9, 230.1, 0.8038, 0.8084),  # −5.3 %
        "lm_head_topk_b8": (146.5, 121.9, 0.7238, 0.7680),  # −16.8 %
        "mlp_mixer_b8": (424.3, 455.6, 0.7146, 0.8494),  # +7.4 %
        "swin_window_attn_b2": (406.3, 433.8, 0.7554, 0.7504),  # +6.8 %
    },
    "holdout5_rerun": {
        "cnn_train_step_b32": (692.1, 676.2, 0.6247, 0.7142),  # −2.3 %
        "dual_tower_streams_b4": (146.7, 171.1, 0.7803, 0.7490),  # +16.6 %
        "fpn_head_b2": (1103.1, 1152.7, 0.4121, 0.4915),  # +4.5 %
        "gcn_scatter_b1": (876.9, 880.8, 0.0411, -0.0100),  # +0.4 %
        "gpt2_prefill_b1": (239.0, 230.4, 0.6794, 0.6805),  # −3.6 %
        "lm_head_topk_b8": (125.3, 121.4, 0.3726, 0.6423),  # −3.1 %
        "mlp_mixer_b8": (419.3, 453.2, 0.6392, 0.5992),  # +8.1 %
        "swin_window_attn_b2": (400.0, 433.2, 0.6718, 0.6675),  # +8.3 %
    },
}
#: Outside ±10 %, by set: the embedding-bag step (its replay measured 110 µs against 98
#: predicted); the LM head's top-k (a 28-kernel chain of one-block kernels and two memsets:
#: 146.5 µs measured on a machine with a slow host, 121.9 predicted; 125.3 on the next
#: machine); the two towers on two streams (+16.6 % on the faster machine).
GRAPHED_MISSES = {
    "holdout2_fresh": {"embbag_small"},
    "holdout5": {"lm_head_topk_b8"},
    "holdout5_rerun": {"dual_tower_streams_b4"},
}
OUTSIDE_RANGE = {"holdout5_rerun": {"dual_tower_streams_b4"}}
#: Saving more than 15 points off without --eager-us, by set: the RMSprop loop, whose eager
#: time from its trace is 47 % high (a Python loop of 400 launches whose profiled host time
#: the model deflates too little); the LM head on the faster machine, whose eager step took
#: 200 µs there (530 µs on the other) while its trace gives 339 µs.
SAVING_MISSES = {"holdout4": {"rmsprop_loop"}, "holdout5_rerun": {"lm_head_topk_b8"}}


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
    assert (abs(row.error_frac) <= 0.10) == (name not in GRAPHED_MISSES.get(recording, ()))
    inside = row.low_us <= row.graphed_measured_us <= row.high_us
    assert inside == (name not in OUTSIDE_RANGE.get(recording, ()))
    assert (abs(row.saving_error_points) <= 15) == (name not in SAVING_MISSES.get(recording, ()))


@pytest.mark.parametrize(
    ("recording", "median_error"), [("holdout5", 0.0605), ("holdout5_rerun", 0.0406)]
)
def test_holdout5_summary(
    recording: str, median_error: float, rows: dict[str, dict[str, ValidationRow]]
) -> None:
    """The set recorded after the last freeze, on two machines: 7 of 8 within ±10 % on each,
    median |error| 6.0 % and 4.1 %."""
    errors = [abs(r.error_frac) for r in rows[recording].values()]
    assert sum(e <= 0.10 for e in errors) == 7
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
        w
        for name in (*EXPECTED, "holdout3_fresh")
        for w in validation_workloads(VALIDATION / name)
    ]
    assert len(workloads) == 38
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 36, "compute-bound": 2}
