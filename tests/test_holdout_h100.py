"""H100 recordings (``sample_traces/validation/h100_*``; ``record_h100.sh``): hold-out
workloads written for the H200, recorded with ``traceinspect profile`` on an H100 80GB HBM3
(SXM) after ``traceinspect calibrate`` measured the machine, and predicted with the built-in
H100 profile (``traceinspect/calibration/nvidia-h100-80gb-hbm3.json``). Nothing of the model
was fitted on an H100: the profile is calibrate's measurements (the mean of the two runs
before ``h100_holdout18`` and ``h100_holdout17``), its copy host cost the median of those two
sets' copy probes.

* ``h100_holdout17``, ``h100_holdout18``: the profile's own lease; its copy cost came from
  their probes.
* ``h100_holdout15``, ``h100_holdout16``: recorded on a later lease once the profile was
  committed: blind. Before the H100 profile, an H100 trace was predicted with the H200's
  (the generic fallback): 7 of these 16 within ±10 % from the trace alone.
* ``h100_holdout14`` (three of eight), ``h100_holdout13``: recorded on a third lease once the
  replay schedule packed matrix kernels onto the SMs left free: blind for the current model.
"""

from __future__ import annotations

import re
import statistics
import sys
from typing import Any

import numpy as np
import pytest
from conftest import SAMPLES, assert_probe_prediction, assert_summary, fresh_row, recording_rows

sys.path.insert(0, str(SAMPLES.parent / "bench"))
from validation_table import (  # noqa: E402
    VALIDATION_DIR,
    prepare,
    validation_workloads,
)

from traceinspect.calibration import calibration_for  # noqa: E402

# set -> workload -> (measured graphed p50 µs, predicted µs with the probe's copy cost,
# predicted µs from the trace alone); the comments give both errors
EXPECTED: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout17": {
        "adamw_many_small_params": (368.8, 375.5, 373.8),  # +1.8 / +1.4 %
        "ctr_dense_sparse_8in_b64": (93.1, 97.5, 100.0),  # +4.7 / +7.4 %
        "depthwise_sep_4in_b8": (234.4, 240.9, 242.3),  # +2.8 / +3.4 %
        "graph_conv_2in_b1": (63.2, 66.3, 66.7),  # +5.0 / +5.6 %
        "kv_append_decode_4in": (84.2, 88.7, 87.9),  # +5.3 / +4.4 %
        "multimodal_3in_b16": (102.7, 103.4, 93.7),  # +0.8 / −8.7 %
        "tabular_resnet_b512": (173.5, 177.4, 176.5),  # +2.2 / +1.7 %
        "triplet_loss_3in_b32": (283.4, 277.7, 267.3),  # −2.0 / −5.7 %
    },
    "h100_holdout18": {
        "focal_loss_detection_4in_b4": (115.8, 116.9, 114.2),  # +1.0 / −1.4 %
        "mixture_density_head_2in_b256": (122.0, 131.0, 129.7),  # +7.4 / +6.4 %
        "pointnet_b8": (186.6, 188.4, 188.5),  # +1.0 / +1.0 %
        "seq2seq_gru_decoder_5in_b16": (168.5, 170.3, 170.6),  # +1.1 / +1.3 %
        "sgd_momentum_loop_40params": (243.5, 255.7, 254.7),  # +5.0 / +4.6 %
        "swin_window_attn_b4": (207.0, 211.0, 210.3),  # +1.9 / +1.6 %
        "token_type_pos_embed_3in_b32": (110.9, 111.8, 110.0),  # +0.9 / −0.7 %
        "unet_tiny_b2": (259.0, 271.5, 270.9),  # +4.9 / +4.6 %
    },
    "h100_holdout15": {
        "dcn_v2_streams_b1024": (143.8, 151.6, 152.0),  # +5.4 / +5.7 %
        "haar_wavelet_b8": (212.4, 201.1, 200.8),  # −5.3 / −5.5 %
        "kv_ring_buffer_decode_b8": (398.4, 392.1, 394.2),  # −1.6 / −1.1 %
        "lora_mlp_b16": (544.6, 545.7, 545.2),  # +0.2 / +0.1 %
        "pipeline_microbatch_streams_b4": (87.3, 89.6, 90.1),  # +2.6 / +3.3 %
        "ppo_update_b2048": (419.4, 424.6, 430.2),  # +1.2 / +2.6 %
        "scatter_histogram_b64": (71.9, 77.0, 77.2),  # +7.2 / +7.4 %
        "siamese_streams_b32": (73.9, 78.7, 79.9),  # +6.5 / +8.1 %
    },
    "h100_holdout16": {
        "clip_two_tower_streams_b64": (84.9, 87.5, 87.5),  # +3.0 / +3.1 %
        "feature_fusion_6in_b32": (78.4, 83.4, 77.9),  # +6.3 / −0.7 %
        "lion_foreach_update": (730.1, 736.5, 743.4),  # +0.9 / +1.8 %
        "mbconv_se_b1": (212.9, 223.9, 224.5),  # +5.1 / +5.4 %
        "retrieval_topk_b16": (135.0, 135.3, 135.2),  # +0.3 / +0.2 %
        "rwkv_timemix_loop_b4": (1876.9, 1920.0, 1919.3),  # +2.3 / +2.3 %
        "stft_melspec_b8": (56.2, 59.3, 59.3),  # +5.6 / +5.5 %
        "wide_deep_4in_streams_b256": (67.0, 71.4, 74.2),  # +6.5 / +10.7 %
    },
    "h100_holdout14": {
        "compiled_gpt_block_b4": (81.7, 80.4, 80.6),  # −1.5 / −1.4 %
        "convnext_block_b8": (598.8, 607.7, 607.3),  # +1.5 / +1.4 %
        # +13.8 / +13.2 % until a kernel of several waves made room in its last wave
        "inception_streams_b16": (289.0, 298.2, 296.2),  # +3.2 / +2.5 %
    },
    "h100_holdout13": {
        "deepfm_streams_b2048": (129.0, 134.8, 136.7),  # +4.5 / +5.9 %
        "gumbel_softmax_vae_b256": (108.1, 114.9, 113.5),  # +6.3 / +5.0 %
        "hyena_fftconv_b8": (4096.4, 4168.1, 4168.6),  # +1.8 / +1.8 %
        "kalman_filter_b1024": (1308.5, 1355.6, 1354.5),  # +3.6 / +3.5 %
        "neural_ode_rk4_b512": (2034.0, 2065.6, 2066.0),  # +1.6 / +1.6 %
        "set_transformer_b64": (1152.7, 1163.4, 1163.9),  # +0.9 / +1.0 %
        "tcn_b32": (1099.0, 1121.8, 1121.0),  # +2.1 / +2.0 %
        "yolo_head_decode_b16": (1446.5, 1458.4, 1458.2),  # +0.8 / +0.8 %
    },
}
BLIND = ("h100_holdout15", "h100_holdout16")
#: Recorded on a third lease once the replay schedule packed matrix kernels onto free SMs:
#: blind for the model as it stands (holdout14's eight were cut to three by the recording's
#: time limit; torch.compile's GPT block took 190 s).
BLIND_NOW = ("h100_holdout14", "h100_holdout13")


def test_h100_traces_take_the_h100_profile() -> None:
    for recording in EXPECTED:
        for w in validation_workloads(VALIDATION_DIR / recording):
            cal = calibration_for(prepare(w).timeline)
            assert cal.name == "nvidia-h100-80gb-hbm3" and not cal.is_fallback, w.name


@pytest.mark.parametrize(
    ("probe", "calibration", "within", "median_error", "inside"),
    [
        # as `traceinspect profile` predicts, with the probe's copy cost. At the profile's
        # freeze 15 of 16 (median 3.1 %): DCN-v2 read −16.2 %, as on the H200, until a GEMM
        # packed onto the SMs another GEMM left free ran slower in the schedule (a rule from
        # the H200's DCN-v2 replays, made after this set was seen: not blind for DCN-v2);
        # median 1.4 % (3.2 % from the trace alone) while matrix kernels side by side did
        # not slow each other: its four multi-stream steps read 1.0-4.7 % high, 3.1-8.1 %
        # since a light kernel beside another stream's is charged LIGHT_BESIDE_NS (median
        # 2.1 % before)
        (True, "", 16, 0.0408, 16),
        # from the trace alone (15 of 16, 5.2 %, DCN-v2 −13.8 %, at freeze); median 4.8 %
        # while each copy was charged the profile's 6.8 µs, 2.4 % since a fast host's copies
        # follow its pace (eager.COPY_PER_LAUNCH_CALL: launch calls a median 4.6-5.8 µs); the
        # four-input Wide & Deep +8.5 → +10.7 % with LIGHT_BESIDE_NS (16 of 16 before)
        (False, "", 15, 0.0318, 16),
        # the same traces with the H200 profile, as every H100 trace was predicted before:
        # every launch and replay at the H200's costs, each copy at the H200's 9.2 µs (6 of
        # 16 within from the trace alone, median 10.7 %) or at the trace's pace (13 of 16)
        (True, "nvidia-h200", 14, 0.0479, 16),
        (False, "nvidia-h200", 13, 0.0488, 16),
    ],
)
def test_the_blind_h100_sets(
    probe: bool, calibration: str, within: int, median_error: float, inside: int
) -> None:
    all_rows = [r for s in BLIND for r in recording_rows(s, probe, calibration).values()]
    assert_summary(all_rows, 16, within, median_error, inside)


@pytest.mark.parametrize(("probe", "median_error"), [(True, 0.0175), (False, 0.0176)])
def test_the_h100_sets_blind_for_the_current_model(probe: bool, median_error: float) -> None:
    # 11 of 11 within ±10 % either way, each inside its range. At the freeze 10 of 11: the
    # miss was Inception, +13.8 % (+13.2 % from the trace alone), as on the H200 (+15.6 and
    # +16.7 %), until a kernel of several waves made room in its last wave (a rule from the
    # H200's FPN and Inception replays: not blind for Inception since)
    all_rows = {r.workload: r for s in BLIND_NOW for r in recording_rows(s, probe).values()}
    assert_summary(list(all_rows.values()), 11, 11, median_error, 11)


def test_the_blind_h100_savings() -> None:
    # saving without --eager-us within 15 points on 15 of 16: the Lion update, whose graph
    # must copy in 45 MB of gradients (replay 62 % slower than eager), reads 36 points high
    all_rows = [r for s in BLIND for r in recording_rows(s, True).values()]
    points = {r.workload: r.saving_error_points for r in all_rows}
    assert sum(abs(p) <= 15 for p in points.values()) == 15
    assert points["lion_foreach_update"] == pytest.approx(36, abs=1)


def test_h100_verdicts_agree_with_what_replay_did() -> None:
    """Each step's verdict agrees with what replay measurably did and with its predicted
    saving, but for two: the LoRA MLP, where replay saved 23 % (38-41 % on the H200), reads
    ``mixed`` beside a predicted 15 %; and the Lion update reads ``launch-bound`` (predicted
    saving 35 %) where replay ran 62 % slower than eager, since its graph must copy in 45 MB
    of gradients that the trace shows as one eager step's arguments (as on the H200)."""
    from conftest import step_verdicts_agreeing_with_replay

    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.parse import load_trace

    workloads = [w for s in EXPECTED for w in validation_workloads(VALIDATION_DIR / s)]
    odd = {w.name: w for w in workloads if w.name in ("lora_mlp_b16", "lion_foreach_update")}
    rest = [w for w in workloads if w.name not in odd]
    # replay saved 3-7 % on the ConvNeXt blocks, the Hyena FFT convolution and the YOLO
    # decode (compute-bound), 15 % on the Set Transformer (mixed), 20 % or more on the rest
    assert step_verdicts_agreeing_with_replay(rest) == {
        "launch-bound": 37,
        "compute-bound": 3,
        "mixed": 1,
    }
    for name, verdict, measured, predicted in (
        ("lora_mlp_b16", "mixed", 0.231, 0.148),
        ("lion_foreach_update", "launch-bound", -0.618, 0.348),
    ):
        step = diagnose(load_trace(odd[name].trace)).region(odd[name].region)
        assert step.verdict == verdict
        assert odd[name].saving == pytest.approx(measured, abs=0.001)
        assert step.estimate is not None
        assert step.estimate.saving_frac == pytest.approx(predicted, abs=0.001)


#: ``holdout45``'s eight workloads (written for the H200 after the simulated eager run was made
#: to share the device, never recorded there), recorded twice on one H100 lease after the
#: model was frozen: blind. Values as in :data:`EXPECTED`.
EXPECTED_45: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout45": {
        "conv_stack_beside_gemm_chain_2streams_b16": (229.6, 240.8, 234.6),  # +4.8 / +2.2 %
        "fp32_resnet_basic_blocks_b8": (414.8, 400.7, 398.8),  # −3.4 / −3.9 %
        # cuDNN's two fp32 GRU layers run side by side in the replay (its kernels sum to 1.7x
        # the replay's span); the schedule keeps layer 2's input GEMM behind layer 1 (half
        # a chunk since HANDOVER_WEIGHT)
        "gru_fp32_one_stream_b16": (1071.1, 1278.2, 1273.4),  # +19.3 / +18.9 %
        "lstm_beside_mlp_2streams_b32": (1016.8, 981.9, 975.1),  # −3.4 / −4.1 %
        "ranker_10in_b128": (181.2, 191.6, 138.3),  # +5.7 / −23.7 %
        "sgd_momentum_foreach_update": (2482.9, 2326.4, 2047.8),  # −6.3 / −17.5 %
        "tf32_beside_fp32_gemms_2streams_b512": (721.7, 667.1, 664.0),  # −7.6 / −8.0 %
        "three_dense_heads_shared_feats_3streams_b2": (188.2, 186.4, 182.0),  # −1.0 / −3.3 %
    },
    "h100_holdout45_rerun": {
        "conv_stack_beside_gemm_chain_2streams_b16": (226.0, 238.1, 234.1),  # +5.4 / +3.6 %
        "fp32_resnet_basic_blocks_b8": (418.8, 406.4, 402.1),  # −3.0 / −4.0 %
        "gru_fp32_one_stream_b16": (1062.5, 1275.4, 1271.2),  # +20.0 / +19.6 %
        "lstm_beside_mlp_2streams_b32": (1026.2, 982.6, 974.9),  # −4.2 / −5.0 %
        "ranker_10in_b128": (168.5, 173.2, 138.0),  # +2.8 / −18.1 %
        "sgd_momentum_foreach_update": (2464.7, 2340.7, 2049.4),  # −5.0 / −16.9 %
        "tf32_beside_fp32_gemms_2streams_b512": (701.7, 669.8, 664.0),  # −4.5 / −5.4 %
        "three_dense_heads_shared_feats_3streams_b2": (194.1, 187.0, 182.6),  # −3.7 / −5.9 %
    },
}


@pytest.mark.parametrize(
    ("probe", "within", "median_error", "inside", "savings"),
    [
        # with the probes' copy cost: 14 of 16; the fp32 GRU misses on both recordings, and
        # falls outside its range (the TF32-beside-FP32 GEMMs, −4.7 to −7.7 %, did too until
        # the range carried the multi-stream schedule's own error: its top 696-700 µs)
        (True, 14, 0.0469, 14, 14),
        # from the trace alone the many-input steps read short as well: a copy charged its
        # host's launch pace (eager.COPY_PER_LAUNCH_CALL) where the probes measured more
        # (the ranker's 10 inputs −23.7 / −18.1 %, the foreach SGD's 96 gradients −17.5 /
        # −16.8 %), the SGD's below its range
        (False, 10, 0.0566, 12, 14),
    ],
)
def test_the_blind_h100_holdout45(
    probe: bool, within: int, median_error: float, inside: int, savings: int
) -> None:
    rows = [r for s in EXPECTED_45 for r in recording_rows(s, probe).values()]
    assert_summary(rows, 16, within, median_error, inside)
    # the savings that miss are the foreach SGD's: replay ran 21-25 % slower than eager (its
    # graph copies in 96 gradients), read as a saving of 45 %
    points = [(r.workload, r.saving_error_points) for r in rows]
    assert sum(abs(p) <= 15 for _, p in points) == savings
    assert all(abs(p) > 15 for w, p in points if w == "sgd_momentum_foreach_update")


def test_h100_holdout45_verdicts() -> None:
    """No region's verdict contradicts its predicted saving; the steps agree with what replay
    did but for the foreach SGD (``launch-bound``, replay 21-25 % slower than eager, as the
    Lion update on either GPU) and the TF32-beside-FP32 GEMMs (``mixed`` at a predicted 19
    and 20 %, where replay saved 29 and 27 %; the rerun read launch-bound at 21 % before a
    light kernel beside another stream's was charged ``LIGHT_BESIDE_NS``)."""
    from conftest import step_read, step_verdicts_agreeing_with_replay

    odd, rest = [], []
    for s in EXPECTED_45:
        for w in validation_workloads(VALIDATION_DIR / s):
            tf32 = w.name.startswith("tf32_beside")
            (odd if w.name == "sgd_momentum_foreach_update" or tf32 else rest).append(w)
    assert len(odd) == 4
    assert step_verdicts_agreeing_with_replay(rest) == {"launch-bound": 12}
    verdicts = [step_read(w)[0] for w in odd]
    assert sorted(verdicts) == ["launch-bound", "launch-bound", "mixed", "mixed"]


#: ``holdout46`` (written after ``holdout45`` was recorded on the H200, committed before any
#: recording) and the chains probe, recorded on two H100 leases on 2026-12-05 (15:28-15:37
#: and 15:38-15:42 UTC; an H200 was asked for): measured graphed p50, predicted with the
#: probes' copy cost and from the trace alone, µs.
EXPECTED_46: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout46": {
        "bigru_beside_mlp_2streams_b16": (502.8, 507.9, 501.4),  # +1.0 / −0.3 %
        "bilstm_tagger_b32": (841.8, 817.9, 814.1),  # −2.8 / −3.3 %
        "decoder_layer_b4": (106.0, 105.5, 103.6),  # −0.5 / −2.3 %
        "gru_cell_greedy_decode_b32": (800.7, 792.5, 788.4),  # −1.0 / −1.5 %
        # three hand-written recurrences on three streams: the replay slows them beside
        # each other, as the schedule does since it charges a light kernel beside another
        # stream's LIGHT_BESIDE_NS (−13.2 % from the trace before)
        "relu_chains_3streams_b8": (314.6, 322.1, 315.8),  # +2.4 / +0.4 %
        # recorded before the eager run kept a channels-last input channels-last: its eager
        # trace ran a layout copy and a slow add that the replay did not
        "resnet_bottlenecks_cl_b16": (499.8, 578.5, 576.6),  # +15.8 / +15.4 %
        # cuDNN's three LSTM layers overlap in the replay more than the eager waits allow
        # (as holdout45's fp32 GRU): read half way to handed over (HANDOVER_WEIGHT)
        "stacked_lstm_lm_b16": (865.6, 879.6, 877.5),  # +1.6 / +1.4 %
        "twin_lstm_encoders_2streams_b32": (794.4, 744.7, 738.0),  # −6.2 / −7.1 %
    },
    "h100_chains_probe": {
        "cudnn_bilstm_chains_1stream_b16": (365.7, 347.0, 342.7),  # −5.1 / −6.3 %
        "cudnn_bilstm_chains_2streams_b16": (762.4, 662.9, 663.2),  # −13.0 / −13.0 %
        "cudnn_lstm_chains_1stream_b16": (298.9, 297.7, 295.7),  # −0.4 / −1.1 %
        "cudnn_lstm_chains_2streams_b16": (586.8, 566.9, 561.6),  # −3.4 / −4.3 %
        "cudnn_lstm_chains_4streams_b16": (1209.0, 1101.5, 1098.0),  # −8.9 / −9.2 %
        "gemm_tanh_chains_1stream_b16": (359.4, 359.5, 355.0),  # +0.0 / −1.2 %
        "gemm_tanh_chains_2streams_b16": (392.2, 434.2, 427.8),  # +10.7 / +9.1 %
        "gemm_tanh_chains_4streams_b16": (442.1, 460.5, 453.6),  # +4.2 / +2.6 %
        "gemm_tanh_chains_8streams_b16": (613.7, 540.9, 518.0),  # −11.9 / −15.6 %
    },
}


def test_the_blind_h100_holdout46() -> None:
    """Blind for the model as it stood: 5 of 8 within ±10 % from the trace alone (median
    8.0 %), 6 inside their ranges (the ResNet and the LSTM LM above them; the LSTM LM inside
    since the range's low end reads cuDNN's layers handed over a chunk earlier), every saving
    within 15 points; every step reads launch-bound, as replay agreed (41-93 % saved). Since
    a light kernel beside another stream's is charged ``LIGHT_BESIDE_NS`` (a rule from the
    H200's replays), the three recurrences on three streams read within too: 6 of 8, median
    2.8 %; since the prediction reads cuDNN's hand-overs half way
    (``occurrence.HANDOVER_WEIGHT``) the LSTM LM too (+13.9 → +1.4 %): 7 of 8, median 1.9 %,
    7 inside."""
    from conftest import step_verdicts_agreeing_with_replay

    rows = recording_rows("h100_holdout46", False)
    assert_summary(list(rows.values()), 8, 7, 0.0194, 7)
    assert {n for n, r in rows.items() if abs(r.error_frac) > 0.10} == {"resnet_bottlenecks_cl_b16"}
    assert all(abs(r.saving_error_points) <= 15 for r in rows.values())
    workloads = validation_workloads(VALIDATION_DIR / "h100_holdout46")
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 8}


def test_chains_beside_each_other() -> None:
    """The chains probe, unprofiled: K cuDNN LSTMs on K streams run one after the other
    (the handle's streams are shared: 1.96x for 2, 4.05x for 4), which the eager trace's
    waits show and the schedule keeps (−3.6 / −8.8 %). Hand-written GEMM + tanh recurrences
    overlap: 1.09x for 2, 1.23x for 4 (+10.7 / +4.2 %; −1.2 / −2.8 % before a light kernel
    beside another stream's was charged ``LIGHT_BESIDE_NS``), but 1.71x for 8, which the
    schedule reads 1.50x (−11.9 %; 1.42x, −16.7 % before). A BiLSTM's two directions take
    1.22x one LSTM's time, the schedule 1.17x (−5.1 %; 1.12x, −9.0 % before); two BiLSTMs run
    one after the other (2.08x)."""
    rows = {w.name: w for w in validation_workloads(VALIDATION_DIR / "h100_chains_probe")}

    def ratio(name: str, base: str) -> float:
        return round(rows[name].graphed_us / rows[base].graphed_us, 2)

    lstm, gemm = "cudnn_lstm_chains_1stream_b16", "gemm_tanh_chains_1stream_b16"
    assert ratio("cudnn_lstm_chains_2streams_b16", lstm) == 1.96
    assert ratio("cudnn_lstm_chains_4streams_b16", lstm) == 4.05
    assert [ratio(f"gemm_tanh_chains_{k}streams_b16", gemm) for k in (2, 4, 8)] == [
        1.09,
        1.23,
        1.71,
    ]
    assert ratio("cudnn_bilstm_chains_1stream_b16", lstm) == 1.22
    assert ratio("cudnn_bilstm_chains_2streams_b16", "cudnn_bilstm_chains_1stream_b16") == 2.08
    predicted = EXPECTED_46["h100_chains_probe"]
    assert round(
        predicted["gemm_tanh_chains_8streams_b16"][1] / predicted[gemm][1], 2
    ) == pytest.approx(1.50, abs=0.01)


#: ``holdout49`` (written after ``holdout48`` was recorded on the H200, committed before any
#: recording) recorded twice on one H100 lease on 2026-12-05 (18:59-19:10 UTC; an H200 was
#: asked for and none came), after the schedule let light kernels start on partial room and
#: matrix kernels of several waves pack (1c4fff3): blind for that model. The LightGCN step's
#: rerun is left out: its replay was read incorrect (two eager calls' atomics agreed by chance,
#: the replay's did not; ``profile`` now calls eager again before it says so), so the rerun
#: has no graphed row to set beside its trace.
EXPECTED_49: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout49": {
        "hybrid_demucs_time_spec_2streams_b4": (2303.5, 2274.8, 2274.3),  # −1.2 / −1.3 %
        "joint_ctc_attention_loss_2streams_b8": (2214.2, 2170.4, 2170.7),  # −2.0 / −2.0 %
        "lattice_boltzmann_d2q9_loop_b4": (3893.4, 3902.2, 3901.5),  # +0.2 / +0.2 %
        "lightgcn_content_tower_3streams_b1024": (6117.4, 6398.0, 6397.6),  # +4.6 / +4.6 %
        "ntm_copy_loop_b4": (1022.0, 1084.9, 1082.6),  # +6.2 / +5.9 %
        "pinn_burgers_train_adam_b8192": (2399.7, 2273.9, 2271.8),  # −5.2 / −5.3 %
        "pspnet_pyramid_pool_aux_3streams_b2": (4824.0, 4868.1, 4867.0),  # +0.9 / +0.9 %
        "xcit_s12_xca_b64": (7645.3, 7840.9, 7840.7),  # +2.6 / +2.6 %
    },
    "h100_holdout49_rerun": {
        "hybrid_demucs_time_spec_2streams_b4": (2375.7, 2305.0, 2303.6),  # −3.0 / −3.0 %
        "joint_ctc_attention_loss_2streams_b8": (2226.0, 2178.0, 2176.1),  # −2.2 / −2.2 %
        "lattice_boltzmann_d2q9_loop_b4": (3893.3, 3901.8, 3901.6),  # +0.2 / +0.2 %
        "ntm_copy_loop_b4": (1025.4, 1084.7, 1083.9),  # +5.8 / +5.7 %
        "pinn_burgers_train_adam_b8192": (2416.6, 2281.2, 2276.4),  # −5.6 / −5.8 %
        "pspnet_pyramid_pool_aux_3streams_b2": (4809.2, 4909.9, 4910.4),  # +2.1 / +2.1 %
        "xcit_s12_xca_b64": (7656.1, 7848.7, 7847.7),  # +2.5 / +2.5 %
    },
}


def test_the_blind_h100_holdout49() -> None:
    """Blind for the schedule's partial-room rules: all 15 graphed times within ±10 % from
    the trace alone (median |error| 4.5 %, worst the Hybrid-Demucs encoder's two branches on
    the rerun, −6.1 %), each inside its range, every saving within 15 points. The four
    multi-stream steps (2-3 side streams: PSPNet's pyramid pooling beside its auxiliary head,
    Demucs's waveform and spectrogram branches, a CTC recursion of 700 single-block kernels
    beside an attention decoder, LightGCN's propagation beside its content tower) within
    6.1 %. Since a light kernel beside another stream's is charged ``LIGHT_BESIDE_NS`` (not
    blind: chosen after), median 2.6 %, the multi-stream steps within 5.8 % (the CTC
    recursion −4.7 → −2.0 %), the worst the NTM loop, +5.9 %. Step verdicts agree with
    replay on 14 of 15: XCiT at batch 64 on the first recording reads launch-bound
    (predicted 21 %, its eager time from the trace +19 %) where replay saved 8 % (21 % on
    the rerun, whose eager p50 was 17 % slower)."""
    from conftest import assert_one_step_reads, step_verdicts_agreeing_with_replay

    rows = [
        *recording_rows("h100_holdout49", False).values(),
        *recording_rows("h100_holdout49_rerun", False).values(),
    ]
    assert_summary(rows, 15, 15, 0.0256, 15)
    assert max(abs(r.error_frac) for r in rows) == pytest.approx(0.0593, abs=0.001)
    assert all(abs(r.saving_error_points) <= 15 for r in rows)
    streams = [r for r in rows if "streams" in r.workload]
    assert len(streams) == 7 and max(abs(r.error_frac) for r in streams) <= 0.058
    assert_one_step_reads(
        "h100_holdout49",
        "xcit_s12_xca_b64",
        {"compute-bound": 3, "launch-bound": 4},
        saving=0.08,
        verdict="launch-bound",
        predicted=0.21,
    )
    rerun = validation_workloads(VALIDATION_DIR / "h100_holdout49_rerun")
    assert step_verdicts_agreeing_with_replay(rerun) == {"compute-bound": 1, "launch-bound": 6}


#: ``holdout50`` (written after ``holdout49`` was recorded, committed before any recording or
#: prediction of it) recorded twice on one H100 lease on 2026-12-06 (01:04-01:15 UTC), the
#: model unchanged since the light-kernel charge beside another stream's (``LIGHT_BESIDE_NS``,
#: chosen after ``holdout49``): blind for that charge. Six of its eight workloads fork onto
#: two or three side streams.
EXPECTED_50: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout50": {
        "agcn_joint_bone_motion_3streams_b16": (8589.3, 8619.3, 8619.6),  # +0.3 / +0.4 %
        "bisenet_spatial_context_2streams_b4": (2654.9, 2612.1, 2612.6),  # −1.6 / −1.6 %
        "cyclegan_resnet_generator_b8": (6441.9, 6608.2, 6608.3),  # +2.6 / +2.6 %
        "darts_search_cell_3streams_b64": (4501.0, 4882.7, 4883.0),  # +8.5 / +8.5 %
        "dreamer_encoder_imagine_2streams_b16": (2209.9, 2115.8, 2117.1),  # −4.3 / −4.2 %
        "fcos_head_towers_2streams_b2": (2972.7, 2883.4, 2884.3),  # −3.0 / −3.0 %
        "vin_gridworld_plan_loop_b8": (634.1, 644.0, 642.6),  # +1.6 / +1.4 %
        "youtube_dnn_logq_towers_2streams_b4096": (800.4, 803.6, 808.8),  # +0.4 / +1.0 %
    },
    "h100_holdout50_rerun": {
        "agcn_joint_bone_motion_3streams_b16": (8611.9, 8652.2, 8651.8),  # +0.5 / +0.5 %
        "bisenet_spatial_context_2streams_b4": (2648.7, 2608.2, 2608.5),  # −1.5 / −1.5 %
        "cyclegan_resnet_generator_b8": (6442.3, 6619.8, 6619.8),  # +2.8 / +2.8 %
        "darts_search_cell_3streams_b64": (4512.6, 4905.8, 4906.6),  # +8.7 / +8.7 %
        "dreamer_encoder_imagine_2streams_b16": (2203.6, 2147.1, 2147.5),  # −2.6 / −2.5 %
        "fcos_head_towers_2streams_b2": (2985.2, 2889.4, 2889.9),  # −3.2 / −3.2 %
        "vin_gridworld_plan_loop_b8": (639.5, 647.4, 648.4),  # +1.2 / +1.4 %
        "youtube_dnn_logq_towers_2streams_b4096": (807.3, 809.7, 810.5),  # +0.3 / +0.4 %
    },
}


def _pair_rows(recording: str) -> dict[tuple[str, str], Any]:
    """The rows of ``recording`` and its rerun from the trace alone, as ``recording_rows``
    caches them (the built-in model), by (recording, workload)."""
    return {
        (name, workload): row
        for name in (recording, f"{recording}_rerun")
        for workload, row in recording_rows(name, False).items()
    }


def test_the_blind_h100_holdout50() -> None:
    """Blind for the light-kernel charge beside another stream's: all 16 graphed times within
    ±10 % from the trace alone (median |error| 2.8 %, worst FCOS's two towers on the rerun,
    −5.4 %), each inside its range, every saving within 15 points; the step verdicts agree
    with what replay saved (seven launch-bound, CycleGAN's generator compute-bound). Since
    light kernels streaming memory share its bandwidth: median 2.6 %, worst −4.3 %; since
    batch-norm, depthwise-convolution and upsampling kernels count as streaming (not as
    gathers) and the slowdown reads what each kernel and those beside it demand: median 2.1
    %, worst DARTS's three candidate branches, +8.5 and +8.7 %."""
    from conftest import step_verdicts_agreeing_with_replay

    rows = list(_pair_rows("h100_holdout50").values())
    assert_summary(rows, 16, 16, 0.0207, 16)
    assert max(abs(r.error_frac) for r in rows) == pytest.approx(0.0873, abs=0.001)
    assert all(abs(r.saving_error_points) <= 15 for r in rows)
    for recording in ("h100_holdout50", "h100_holdout50_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {
            "compute-bound": 1,
            "launch-bound": 7,
        }


def test_the_light_beside_charge_judged_on_h100_holdout50(monkeypatch: pytest.MonkeyPatch) -> None:
    """The charge's blind judgement: the twelve multi-stream recordings read a median
    |error| of 3.7 % with it and 5.15 % without (every one within ±10 % either way). Eleven
    read closer with it, DARTS's three candidate branches most (−5.2 → −1.7 %, −5.1 →
    −1.5 %); the YouTube towers' first recording reads +0.7 % where it read +0.2 %. (The
    model as judged: before light kernels streaming memory shared its bandwidth.)"""
    from traceinspect.analysis.estimate import schedule

    monkeypatch.setattr(schedule, "BANDWIDTH_LATENCY_NS", 0.0)
    charged = _stream_errors("h100_holdout50")
    monkeypatch.setattr(schedule, "LIGHT_BESIDE_NS", 0.0)
    monkeypatch.setattr(schedule, "LIGHT_BESIDE_LOW_NS", 0.0)
    uncharged = _stream_errors("h100_holdout50")
    assert len(charged) == 12
    assert statistics.median(abs(e) for e in charged.values()) == pytest.approx(0.037, abs=0.001)
    assert statistics.median(abs(e) for e in uncharged.values()) == pytest.approx(0.0515, abs=0.001)
    closer = {k for k in charged if abs(charged[k]) < abs(uncharged[k])}
    assert set(charged) - closer == {("h100_holdout50", "youtube_dnn_logq_towers_2streams_b4096")}
    darts = ("h100_holdout50", "darts_search_cell_3streams_b64")
    assert (round(uncharged[darts], 3), round(charged[darts], 3)) == (-0.052, -0.017)


#: ``holdout51`` (written after ``holdout50`` was recorded, committed before any recording)
#: recorded twice on one H100 lease on 2026-12-06 (02:26-02:35 UTC; an H200 was asked for and
#: none came), no model code changed since ``holdout50``: blind. Eight families the set lacked
#: or had only in another shape: an FP8 MLP, a batched GP posterior through cuSOLVER, a PPO
#: update, speculative decoding on two streams, Mixture-of-Depths routing, Hyena's FFT long
#: convolutions on two streams, PointNet++ grouping and a Sinkhorn loop.
EXPECTED_51: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout51": {
        "fp8_scaled_mm_mlp_b64": (374.0, 364.4, 364.1),  # −2.6 / −2.6 %
        "gp_cholesky_posterior_b32": (873.3, 877.7, 878.4),  # +0.5 / +0.6 %
        "hyena_fft_longconv_2streams_b4": (2178.6, 2100.0, 2100.3),  # −3.6 / −3.6 %
        "mixture_of_depths_router_b8": (882.5, 892.4, 892.6),  # +1.1 / +1.1 %
        "pointnet2_knn_grouping_b8": (2572.8, 2581.0, 2580.4),  # +0.3 / +0.3 %
        "ppo_distributions_loss_b2048": (624.1, 612.1, 612.4),  # −1.9 / −1.9 %
        "sinkhorn_ot_loop_b16": (8034.5, 8139.6, 8139.5),  # +1.3 / +1.3 %
        "speculative_draft_target_2streams_b4": (936.4, 921.6, 920.7),  # −1.6 / −1.7 %
    },
    "h100_holdout51_rerun": {
        "fp8_scaled_mm_mlp_b64": (370.5, 364.0, 363.7),  # −1.8 / −1.8 %
        "gp_cholesky_posterior_b32": (874.3, 878.6, 878.9),  # +0.5 / +0.5 %
        "hyena_fft_longconv_2streams_b4": (2182.4, 2064.2, 2063.1),  # −5.4 / −5.5 %
        "mixture_of_depths_router_b8": (882.6, 890.8, 891.6),  # +0.9 / +1.0 %
        "pointnet2_knn_grouping_b8": (2582.5, 2598.5, 2598.2),  # +0.6 / +0.6 %
        "ppo_distributions_loss_b2048": (621.2, 607.8, 612.8),  # −2.1 / −1.4 %
        "sinkhorn_ot_loop_b16": (8271.8, 8160.1, 8154.2),  # −1.4 / −1.4 %
        "speculative_draft_target_2streams_b4": (935.6, 920.6, 920.4),  # −1.6 / −1.6 %
    },
}


def test_the_blind_h100_holdout51() -> None:
    """Blind: 15 of 16 graphed times within ±10 % from the trace alone (median |error|
    1.4 %); the miss is the two Hyena branches on the rerun (−10.6 %, −9.3 % on the first
    recording), whose replays ran the branches' many-wave copies and FFTs more one after the
    other, and slower beside each other, than the schedule: measured above the range's high
    end on both recordings. Every saving within 15 points (the Sinkhorn loop's eager time
    from the trace reads 18-21 % long: +12 and +14 points), every step verdict agreeing with
    what replay saved. Since light kernels streaming memory share its bandwidth (fitted on
    these recordings among others, so not blind): 16 of 16 within, Hyena −6.4 and −7.5 %, the
    rerun's still above its range; since the slowdown reads what each kernel and those
    beside it demand, −3.6 and −5.5 %, both inside."""
    from conftest import step_verdicts_agreeing_with_replay

    rows = _pair_rows("h100_holdout51")
    assert_summary(list(rows.values()), 16, 16, 0.0139, 16)
    hyena = [
        rows[r, "hyena_fft_longconv_2streams_b4"]
        for r in ("h100_holdout51", "h100_holdout51_rerun")
    ]
    assert [round(r.error_frac, 3) for r in hyena] == [-0.036, -0.055]
    assert all(abs(r.saving_error_points) <= 15 for r in rows.values())
    for recording in ("h100_holdout51", "h100_holdout51_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {
            "compute-bound": 1,
            "launch-bound": 7,
        }


#: ``holdout52`` (written to judge the shared bandwidth, ``schedule.BANDWIDTH_LATENCY_NS``, and
#: committed with it before any GPU run) recorded twice on one H100 lease on 2026-12-06
#: (04:41-04:49 UTC; an H200 was asked for and none came): blind. Six steps with
#: memory-bound work on side streams (a 2-D FNO at two resolutions, SimCLR's two views, DLRM's
#: embedding bags on three streams, the AdamW updates of two models, two WaveNet stacks, two
#: GroupNorm decoders) and two on one stream (a Mamba selective-scan loop, a Swin stage).
EXPECTED_52: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout52": {
        "adamw_two_models_2streams": (2492.8, 2270.4, 2270.2),  # −8.9 / −8.9 %
        "dlrm_embbag_3streams_b2048": (329.3, 315.6, 316.2),  # −4.2 / −4.0 %
        "fno2d_spectral_2streams_b8": (1031.1, 944.1, 943.6),  # −8.4 / −8.5 %
        "selective_scan_loop_b4": (2050.9, 1944.8, 1945.3),  # −5.2 / −5.1 %
        # +2.7 / +2.7 % (+7.5 / +7.4 % while timing coincidences stood in for the waits)
        "simclr_two_view_augment_2streams_b64": (3636.6, 3736.0, 3733.7),
        "swin_window_attention_b8": (608.2, 604.5, 602.3),  # −0.6 / −1.0 %
        "unet_decoder_groupnorm_2streams_b2": (5197.2, 5217.5, 5216.1),  # +0.4 / +0.4 %
        "wavenet_gated_2streams_b4": (2526.8, 2529.9, 2527.3),  # +0.1 / +0.0 %
    },
    "h100_holdout52_rerun": {
        "adamw_two_models_2streams": (2487.8, 2270.7, 2270.8),  # −8.7 / −8.7 %
        "dlrm_embbag_3streams_b2048": (337.6, 319.1, 315.7),  # −5.5 / −6.5 %
        "fno2d_spectral_2streams_b8": (1032.6, 943.3, 943.1),  # −8.6 / −8.7 %
        "selective_scan_loop_b4": (2049.1, 1945.2, 1945.7),  # −5.1 / −5.1 %
        # +3.8 / +3.8 % (+8.5 / +8.5 % while timing coincidences stood in for the waits)
        "simclr_two_view_augment_2streams_b64": (3609.6, 3746.9, 3746.9),
        "swin_window_attention_b8": (594.5, 608.3, 606.4),  # +2.3 / +2.0 %
        "unet_decoder_groupnorm_2streams_b2": (5192.9, 5172.6, 5170.4),  # −0.4 / −0.4 %
        "wavenet_gated_2streams_b4": (2485.0, 2522.0, 2518.5),  # +1.5 / +1.3 %
    },
}


def _timing_where_waits_gave_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dependencies as they stood until ``holdout60``: where the program's stream waits gave
    no dependency between a graph's streams, timing coincidences stood in for them."""
    from traceinspect.analysis.estimate import dependencies

    monkeypatch.setattr(dependencies, "_waited", lambda *args: False)


def _range_as_before_holdout56(monkeypatch: pytest.MonkeyPatch) -> None:
    """The range as it stood until ``holdout56``: no share of the multi-stream schedule's
    path of its own either side of the prediction (and the dependencies as they stood then,
    :func:`_timing_where_waits_gave_none`)."""
    from traceinspect.analysis.estimate import occurrence

    _timing_where_waits_gave_none(monkeypatch)
    monkeypatch.setattr(occurrence, "SCHEDULE_LOW_FRAC", 0.0)
    monkeypatch.setattr(occurrence, "SCHEDULE_HIGH_FRAC", 0.0)


def _joins_as_before_holdout58(monkeypatch: pytest.MonkeyPatch) -> None:
    """Library joins as they stood until ``holdout58``: a wait made inside an operator on a
    record whose stream the trace does not tell waited on every stream's last activity (and
    :func:`_timing_where_waits_gave_none`)."""
    from traceinspect.analysis.estimate import dependencies

    _timing_where_waits_gave_none(monkeypatch)

    def any_stream(
        op_key: Any, launch_key: Any, thread: Any, wait_op: Any, held: Any, keys: Any, library: Any
    ) -> dict[int, Any]:
        return {int(key): np.ones(len(wait_op), bool) for key in keys.tolist()}

    monkeypatch.setattr(dependencies, "_operator_streams", any_stream)


def _as_judged_on_holdout52(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared bandwidth as ``holdout52`` judged it: a kernel's demand its device share
    alone, no knee, gathers streaming too, and every streaming kernel slowed by the total
    demand ``B`` (at most 1.5x) once it passes the whole bandwidth."""
    from traceinspect.analysis.estimate import columns, schedule

    _range_as_before_holdout56(monkeypatch)
    monkeypatch.setattr(schedule, "BANDWIDTH_SATURATION", 1.0)
    monkeypatch.setattr(schedule, "BANDWIDTH_KNEE", 1.0)
    monkeypatch.setattr(schedule, "bandwidth_slowdown", lambda own, others: min(own + others, 1.5))
    monkeypatch.setattr(columns, "GATHER_KERNEL", re.compile(r"(?!)"))


def _as_judged_on_holdout53(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared bandwidth as ``holdout53`` judged it (refined on ``holdout52``): every
    streaming kernel slowed ``min(B / 0.8, 1.5)`` times once the total demand ``B`` passes
    0.8 of the bandwidth, even with no other streaming kernel beside it, and gathers matched
    without regard to case (so also batch-norm, depthwise-convolution and upsampling
    kernels, whose template arguments name ``IndexType``)."""
    from traceinspect.analysis.estimate import columns, schedule

    _range_as_before_holdout56(monkeypatch)
    monkeypatch.setattr(
        schedule, "bandwidth_slowdown", lambda own, others: min((own + others) / 0.8, 1.5)
    )
    monkeypatch.setattr(
        columns,
        "GATHER_KERNEL",
        re.compile(r"embedding|index|gather|scatter|sort|topk", re.IGNORECASE),
    )


def _fresh_rows(recording: str) -> dict[tuple[str, str], Any]:
    """The rows of ``recording`` and its rerun from the trace alone, predicted with the
    model as it stands at the call (``recording_rows`` caches the built-in one's)."""
    return {
        (name, w.name): fresh_row(w)
        for name in (recording, f"{recording}_rerun")
        for w in validation_workloads(VALIDATION_DIR / name)
    }


def _stream_errors(recording: str) -> dict[tuple[str, str], float]:
    """:func:`_fresh_rows`' graphed errors of the steps on side streams."""
    return {k: r.error_frac for k, r in _fresh_rows(recording).items() if "streams" in k[1]}


def test_the_blind_h100_holdout52(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blind, with the model it was recorded under: 12 of 16 graphed times within ±10 % from
    the trace alone (median |error| 5.7 %). The misses: the AdamW updates of two models on
    two streams, −26.9 and −27.0 % (their foreach kernels, holding 0.61 and 0.36 of the
    device, fit side by side and each ran 1.4-2x its time alone: each streams nearly all the
    bandwidth on a third of the SMs, which a demand read from the device share did not see),
    and the FNO's two resolutions, −10.7 and −11.0 %, above their range. SimCLR's two views
    read +7.4 and +8.5 % and below their range; 12 of 16 inside it. 12 savings within 15
    points: Swin's eager time from the trace reads 26-46 % short; the AdamW and WaveNet
    reruns' eager times 34 % off. Two step verdicts disagree with replay: SimCLR's (replay
    saved 28 and 22 %), called mixed and compute-bound on a graphed time read long.

    Refined on this set (a demand saturating at half the SMs, a knee at 0.8 of the bandwidth,
    gathers not streaming: not blind since): 14 of 16 within (median 5.1 %), the AdamW
    updates −16.9 and −16.6 %, the FNO −9.1 and −9.5 %. As the model stands (the slowdown
    reading what each kernel and those beside it demand): 16 of 16 within (median 5.1 %), the
    AdamW updates −8.9 and −8.7 %, the FNO −8.5 and −8.7 %."""
    from conftest import step_verdicts_agreeing_with_replay

    with monkeypatch.context() as m:
        _as_judged_on_holdout52(m)
        judged = _fresh_rows("h100_holdout52")
    assert_summary(list(judged.values()), 16, 12, 0.0568, 12)
    missed = {name for (_, name), r in judged.items() if abs(r.error_frac) > 0.10}
    assert missed == {"adamw_two_models_2streams", "fno2d_spectral_2streams_b8"}
    outside = {name for (_, name), r in judged.items() if not r.graphed_inside}
    assert outside == {"fno2d_spectral_2streams_b8", "simclr_two_view_augment_2streams_b64"}
    assert sum(abs(r.saving_error_points) <= 15 for r in judged.values()) == 12
    simclr = "simclr_two_view_augment_2streams_b64"
    with monkeypatch.context() as m, pytest.raises(AssertionError):
        _as_judged_on_holdout52(m)
        step_verdicts_agreeing_with_replay(validation_workloads(VALIDATION_DIR / "h100_holdout52"))
    for recording in ("h100_holdout52", "h100_holdout52_rerun"):
        agreeing = [w for w in validation_workloads(VALIDATION_DIR / recording) if w.name != simclr]
        assert sum(step_verdicts_agreeing_with_replay(agreeing).values()) == 7
    # since timing coincidences no longer stand in where the program's waits gave no
    # dependency, SimCLR's verdict on the first recording agrees too (+2.7 / +3.8 %, +7.4 /
    # +8.5 % before); on the rerun it still reads compute-bound where replay saved 22 %
    workloads = validation_workloads(VALIDATION_DIR / "h100_holdout52")
    assert sum(step_verdicts_agreeing_with_replay(workloads).values()) == 8
    now = _pair_rows("h100_holdout52")
    errors = [abs(r.error_frac) for r in now.values()]
    assert sum(e <= 0.10 for e in errors) == 16
    assert statistics.median(errors) == pytest.approx(0.0388, abs=0.001)
    assert [
        round(now[r, simclr].error_frac, 3) for r in ("h100_holdout52", "h100_holdout52_rerun")
    ] == [0.027, 0.038]
    adamw = [
        now[r, "adamw_two_models_2streams"].error_frac
        for r in ("h100_holdout52", "h100_holdout52_rerun")
    ]
    assert [round(e, 3) for e in adamw] == [-0.089, -0.087]
    with monkeypatch.context() as m:
        _as_judged_on_holdout53(m)
        refined = _fresh_rows("h100_holdout52")
    assert sum(abs(r.error_frac) <= 0.10 for r in refined.values()) == 14
    adamw = [
        refined[r, "adamw_two_models_2streams"].error_frac
        for r in ("h100_holdout52", "h100_holdout52_rerun")
    ]
    assert [round(e, 3) for e in adamw] == [-0.169, -0.166]


def test_the_shared_bandwidth_judged_on_h100_holdout52(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule's blind judgement (as judged: :func:`_as_judged_on_holdout52`) on the twelve
    multi-stream recordings: 9 read closer with it (WaveNet −5.2 → −3.0 %, the FNO −12.2 →
    −10.7 %, the decoders, the AdamW updates by 0.1-0.3 points), SimCLR's two unchanged,
    DLRM's embedding bags overshoot (−4.0 → +9.4 %, −6.5 → +6.2 %: gathers of random rows do
    not stream as elementwise kernels do); median |error| 8.0 % with it, 7.0 % without, 8
    of 12 within ±10 % either way."""
    from traceinspect.analysis.estimate import schedule

    _as_judged_on_holdout52(monkeypatch)
    shared = _stream_errors("h100_holdout52")
    monkeypatch.setattr(schedule, "BANDWIDTH_LATENCY_NS", 0.0)
    alone = _stream_errors("h100_holdout52")
    assert len(shared) == 12
    closer = {k for k in shared if abs(shared[k]) < abs(alone[k]) - 1e-4}
    further = {k for k in shared if abs(shared[k]) > abs(alone[k]) + 1e-4}
    assert len(closer) == 9
    assert further == {("h100_holdout52", "dlrm_embbag_3streams_b2048")}
    assert statistics.median(abs(e) for e in shared.values()) == pytest.approx(0.0796, abs=0.001)
    assert statistics.median(abs(e) for e in alone.values()) == pytest.approx(0.0696, abs=0.001)
    assert sum(abs(e) <= 0.10 for e in shared.values()) == 8
    assert sum(abs(e) <= 0.10 for e in alone.values()) == 8
    fno = ("h100_holdout52", "fno2d_spectral_2streams_b8")
    assert (round(alone[fno], 3), round(shared[fno], 3)) == (-0.122, -0.107)


#: ``holdout53`` (written after the shared bandwidth was refined on ``holdout52``, committed
#: before any GPU run) recorded twice on one H100 lease on 2026-12-06 (05:10-05:19 UTC; an
#: H200 was asked for and none came): blind for the refined rule. Six steps on side streams
#: (the foreach SGD of two models, gradient clipping beside a weight EMA, two hash-grid
#: fields, three tabular towers of gathers, a two-channel log-mel front end, two MLP-Mixer
#: towers) and two on one stream (Conformer convolution modules, an RWKV-4 loop).
EXPECTED_53: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout53": {
        "conformer_conv_module_b4": (899.8, 898.3, 898.0),  # −0.2 / −0.2 %
        "ema_and_clip_2streams": (1471.9, 1171.7, 1171.4),  # −20.4 / −20.4 %
        "hashgrid_nerf_2streams_b65536": (1984.7, 1956.9, 1958.0),  # −1.4 / −1.3 %
        "mixer_towers_2streams_b8": (795.0, 795.3, 794.7),  # +0.0 / −0.0 %
        "rwkv_time_mix_loop_b2": (3461.1, 3605.1, 3603.9),  # +4.2 / +4.1 %
        "sgd_nesterov_two_models_2streams": (2191.9, 2151.5, 2151.6),  # −1.8 / −1.8 %
        "stft_mel_frontend_2streams_b16": (560.1, 526.3, 524.8),  # −6.0 / −6.3 %
        "tabnet_feature_gather_3streams_b4096": (2201.5, 2127.4, 2127.4),  # −3.4 / −3.4 %
    },
    "h100_holdout53_rerun": {
        "conformer_conv_module_b4": (896.8, 897.2, 897.7),  # +0.0 / +0.1 %
        "ema_and_clip_2streams": (1469.7, 1171.3, 1171.9),  # −20.3 / −20.3 %
        "hashgrid_nerf_2streams_b65536": (1978.1, 1938.2, 1938.4),  # −2.0 / −2.0 %
        "mixer_towers_2streams_b8": (793.9, 789.5, 790.8),  # −0.6 / −0.4 %
        "rwkv_time_mix_loop_b2": (3445.8, 3603.3, 3602.8),  # +4.6 / +4.6 %
        "sgd_nesterov_two_models_2streams": (2188.3, 2154.0, 2154.6),  # −1.6 / −1.5 %
        "stft_mel_frontend_2streams_b16": (559.4, 524.5, 525.1),  # −6.2 / −6.1 %
        "tabnet_feature_gather_3streams_b4096": (2191.4, 2116.3, 2119.0),  # −3.4 / −3.3 %
    },
}


def test_the_blind_h100_holdout53(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blind for the refined shared bandwidth (as judged: :func:`_as_judged_on_holdout53`):
    14 of 16 graphed times within ±10 % from the trace alone (median |error| 4.8 %). The
    miss: gradient clipping beside a weight EMA on two streams, −21.7 and −21.6 % (below its
    range): two streams of long foreach kernels (a clip's norms and scaling, an EMA's lerps)
    took about the sum of their times alone in the replay (1,126-1,339 µs against 1,179),
    where the schedule overlaps them at no more than 1.5x (975 µs). The two SGD updates read
    −8.8 and −8.6 %, below their range. 14 savings within 15 points (the EMA step's +21);
    every step verdict launch-bound, as replay saved 17-83 %. As the model stands (the
    slowdown reading what each kernel and those beside it demand, fitted on this set among
    others, so not blind): 14 of 16 within, median 2.7 %, the SGD updates −1.8 and −1.5 %, the
    EMA −20.4 and −20.3 %."""
    from conftest import step_verdicts_agreeing_with_replay

    with monkeypatch.context() as m:
        _as_judged_on_holdout53(m)
        rows = _fresh_rows("h100_holdout53")
    assert_summary(list(rows.values()), 16, 14, 0.0481, 12)
    missed = {name for (_, name), r in rows.items() if abs(r.error_frac) > 0.10}
    assert missed == {"ema_and_clip_2streams"}
    outside = {name for (_, name), r in rows.items() if not r.graphed_inside}
    assert outside == {"ema_and_clip_2streams", "sgd_nesterov_two_models_2streams"}
    assert sum(abs(r.saving_error_points) <= 15 for r in rows.values()) == 14
    for recording in ("h100_holdout53", "h100_holdout53_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 8}
    now = _pair_rows("h100_holdout53")
    # (13 inside until the range carried the multi-stream schedule's own error)
    assert_summary(list(now.values()), 16, 14, 0.0266, 14)
    sgd = [
        now[r, "sgd_nesterov_two_models_2streams"].error_frac
        for r in ("h100_holdout53", "h100_holdout53_rerun")
    ]
    assert [round(e, 3) for e in sgd] == [-0.018, -0.015]


def test_the_refined_bandwidth_judged_on_h100_holdout53(monkeypatch: pytest.MonkeyPatch) -> None:
    """The refined rule's blind judgement: every one of the twelve multi-stream recordings
    reads closer than with no sharing and than with the first version (the demand its
    device share): 10 of 12 within ±10 % (7 without sharing, 8 with the first version),
    median |error| 6.8 % (9.9 %, 7.9 %); the two SGD updates −23.6 → −8.8 % and −23.3 →
    −8.6 %, the hash-grid fields −10.3 → −5.9 %."""
    from traceinspect.analysis.estimate import schedule

    with monkeypatch.context() as m:
        _as_judged_on_holdout53(m)
        now = _stream_errors("h100_holdout53")
    with monkeypatch.context() as m:
        _as_judged_on_holdout52(m)
        first = _stream_errors("h100_holdout53")
    monkeypatch.setattr(schedule, "BANDWIDTH_LATENCY_NS", 0.0)
    none = _stream_errors("h100_holdout53")
    assert len(now) == 12
    assert all(abs(now[k]) < abs(first[k]) - 1e-4 for k in now)
    assert all(abs(now[k]) < abs(none[k]) - 1e-4 for k in now)
    within = [sum(abs(e) <= 0.10 for e in d.values()) for d in (now, first, none)]
    assert within == [10, 8, 7]
    medians = [round(statistics.median(abs(e) for e in d.values()), 3) for d in (now, first, none)]
    assert medians == [0.068, 0.079, 0.099]
    sgd = ("h100_holdout53", "sgd_nesterov_two_models_2streams")
    assert (round(none[sgd], 3), round(now[sgd], 3)) == (-0.236, -0.088)


#: ``holdout54`` (written after the slowdown was reshaped to read what each kernel and those
#: beside it demand, committed before any GPU run) recorded twice on one H100 lease on
#: 2026-12-06 (06:41-06:52 UTC; an H200 was asked for and an H100 came): blind for the
#: reshaped rule. Six steps on side streams (foreach Adam beside Lion, train-mode BatchNorm
#: stems, MobileNetV2 towers, an FPN decoder and its mirror, bf16 GEMMs beside a LayerNorm
#: epilogue, four dense loss heads) and two on one stream (ToMe ViT-B/16, a growing NCA).
EXPECTED_54: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout54": {
        "adam_vit_b16_and_lion_resnet50_2streams": (5170.4, 5287.2, 5284.1),  # +2.3 / +2.2 %
        "dense_loss_heads_4streams_b4": (665.7, 637.4, 600.0),  # −4.3 / −9.9 %
        "fpn_upsample_flip_tta_2streams_b4": (1810.2, 1796.4, 1793.0),  # −0.8 / −1.0 %
        "gemm_chain_beside_norm_epilogue_2streams": (1909.3, 1663.1, 1659.7),  # −12.9 / −13.1 %
        "growing_nca_rollout_loop_b8": (3545.5, 3573.2, 3564.2),  # +0.8 / +0.5 %
        "mbv2_multiscale_towers_3streams_b8": (1511.1, 1240.0, 1231.7),  # −17.9 / −18.5 %
        "tome_vit_b16_r16_b8": (2457.9, 2451.3, 2448.3),  # −0.3 / −0.4 %
        "two_stream_vgg_bn_train_mode_2streams_b16": (4451.0, 4454.1, 4447.8),  # +0.1 / −0.1 %
    },
    "h100_holdout54_rerun": {
        "adam_vit_b16_and_lion_resnet50_2streams": (5173.6, 5270.4, 5267.4),  # +1.9 / +1.8 %
        "dense_loss_heads_4streams_b4": (638.1, 650.4, 601.7),  # +1.9 / −5.7 %
        "fpn_upsample_flip_tta_2streams_b4": (1812.2, 1731.7, 1730.5),  # −4.4 / −4.5 %
        "gemm_chain_beside_norm_epilogue_2streams": (1921.3, 1667.4, 1662.7),  # −13.2 / −13.5 %
        "growing_nca_rollout_loop_b8": (3574.0, 3577.2, 3570.1),  # +0.1 / −0.1 %
        "mbv2_multiscale_towers_3streams_b8": (1515.2, 1244.2, 1234.7),  # −17.9 / −18.5 %
        "tome_vit_b16_r16_b8": (2487.8, 2462.6, 2459.8),  # −1.0 / −1.1 %
        "two_stream_vgg_bn_train_mode_2streams_b16": (4478.7, 4787.3, 4785.7),  # +6.9 / +6.9 %
    },
}


def test_the_blind_h100_holdout54() -> None:
    """Blind for the reshaped slowdown: 12 of 16 graphed times within ±10 % from the trace
    alone (median |error| 3.4 %), 12 inside their range, every saving within 15 points.
    The misses, both read short and above their range: four bf16 GEMMs on one stream beside
    a LayerNorm epilogue's four long streaming kernels on another, −13.1 and −13.5 % (the
    replays ran the two streams' full-device kernels nearly one after the other, 1,307-1,470
    µs for a graph the schedule overlaps in 1,279: a matrix kernel and a streaming one each
    filling the device, not two streaming ones), and three MobileNetV2 towers, −18.5 and
    −18.5 % (cuDNN's inference batch-norm kernels, ``bn_fw_inf``, ran 1.5-2x their time alone
    beside the other towers', and their names do not mark them as streaming). Step verdicts:
    six launch-bound and two compute-bound on the first recording; on the rerun the FPN
    decoder's reads launch-bound (24.7 % predicted) where replay saved 9.8 % (17.6 % on the
    first recording: its eager time moved)."""
    from conftest import step_verdicts_agreeing_with_replay

    rows = _pair_rows("h100_holdout54")
    assert_summary(list(rows.values()), 16, 12, 0.0335, 12)
    missed = {name for (_, name), r in rows.items() if abs(r.error_frac) > 0.10}
    assert missed == {
        "gemm_chain_beside_norm_epilogue_2streams",
        "mbv2_multiscale_towers_3streams_b8",
    }
    assert all(r.graphed_measured_us > r.high_us for (_, n), r in rows.items() if n in missed)
    assert all(abs(r.saving_error_points) <= 15 for r in rows.values())
    assert step_verdicts_agreeing_with_replay(
        validation_workloads(VALIDATION_DIR / "h100_holdout54")
    ) == {"launch-bound": 6, "compute-bound": 2}
    rerun = validation_workloads(VALIDATION_DIR / "h100_holdout54_rerun")
    fpn = "fpn_upsample_flip_tta_2streams_b4"
    with pytest.raises(AssertionError, match=fpn):
        step_verdicts_agreeing_with_replay(rerun)
    assert step_verdicts_agreeing_with_replay([w for w in rerun if w.name != fpn]) == {
        "launch-bound": 5,
        "compute-bound": 2,
    }


def test_the_reshaped_bandwidth_judged_on_h100_holdout54(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reshaped slowdown's blind judgement on the twelve multi-stream recordings, against
    the rule as ``holdout53`` judged it (:func:`_as_judged_on_holdout53`) and no sharing:
    8 of 12 within ±10 % (6 and 4), median |error| 6.3 % (9.7 % and 11.9 %). The Adam and
    Lion updates side by side −1.1 → +2.2 % (−10.7 % with no sharing), the loss heads −14.7
    → −9.9 %, the MobileNetV2 towers −20.5 → −18.5 %; the BatchNorm stems' rerun −0.1 →
    +6.9 %, the GEMMs beside the epilogue unmoved."""
    from traceinspect.analysis.estimate import schedule

    now = _stream_errors("h100_holdout54")
    with monkeypatch.context() as m:
        _as_judged_on_holdout53(m)
        refined = _stream_errors("h100_holdout54")
    monkeypatch.setattr(schedule, "BANDWIDTH_LATENCY_NS", 0.0)
    none = _stream_errors("h100_holdout54")
    assert len(now) == 12
    within = [sum(abs(e) <= 0.10 for e in d.values()) for d in (now, refined, none)]
    assert within == [8, 6, 4]
    medians = [
        round(statistics.median(abs(e) for e in d.values()), 3) for d in (now, refined, none)
    ]
    assert medians == [0.063, 0.097, 0.119]
    heads = ("h100_holdout54", "dense_loss_heads_4streams_b4")
    assert (round(none[heads], 3), round(refined[heads], 3), round(now[heads], 3)) == (
        -0.196,
        -0.147,
        -0.099,
    )


#: ``holdout55`` (written after ``holdout54`` was recorded, committed before any GPU run, the
#: model unchanged since ``holdout54``) recorded twice on one H100 lease on 2026-12-06
#: (07:32-07:39 UTC; an H200 was asked for and none started): blind. Five steps on side
#: streams (Inception-ResNet-A branches with eval-mode cuDNN batch norms, OpenCLIP's local
#: loss by direction, paged decode of two request groups, AMP unscale and clip beside an MLP
#: forward, U-Net down levels at four crop sizes) and three on one stream (a spiking CNN's
#: LIF loop, k-means codebook initialisation, a Deformable DETR encoder).
EXPECTED_55: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout55": {
        # −15.8 / −15.8 % (−15.6 % while timing coincidences stood in for the waits)
        "amp_unscale_clip_gpt2_beside_mlp_forward_2streams": (2118.2, 1782.6, 1782.6),
        "deformable_detr_encoder_b2": (5613.3, 5704.2, 5704.7),  # +1.6 / +1.6 %
        "inception_resnet_a_eval_bn_3streams_b8": (1558.4, 1404.1, 1404.6),  # −9.9 / −9.9 %
        "kmeans_codebook_init_loop_b8192": (1350.9, 1375.5, 1375.8),  # +1.8 / +1.8 %
        "multicrop_unet_down_level_4streams_b2": (3274.2, 3607.6, 3607.0),  # +10.2 / +10.2 %
        "openclip_local_loss_2streams_b32768": (2815.4, 2814.9, 2815.3),  # −0.0 / −0.0 %
        "paged_decode_two_batch_overlap_2streams_b4": (1694.5, 1705.7, 1703.7),  # +0.7 / +0.5 %
        "spiking_csnn_lif_loop_b16": (1893.4, 1868.9, 1868.8),  # −1.3 / −1.3 %
    },
    "h100_holdout55_rerun": {
        # −15.9 / −15.9 % (+0.2 % while a timing coincidence stood in for the waits)
        "amp_unscale_clip_gpt2_beside_mlp_forward_2streams": (2117.3, 1780.2, 1780.3),
        "deformable_detr_encoder_b2": (5641.4, 5725.9, 5726.3),  # +1.5 / +1.5 %
        "inception_resnet_a_eval_bn_3streams_b8": (1557.4, 1408.7, 1409.2),  # −9.5 / −9.5 %
        "kmeans_codebook_init_loop_b8192": (1352.0, 1373.6, 1374.0),  # +1.6 / +1.6 %
        "multicrop_unet_down_level_4streams_b2": (3277.5, 3565.3, 3565.3),  # +8.8 / +8.8 %
        "openclip_local_loss_2streams_b32768": (2815.4, 2817.9, 2818.0),  # +0.1 / +0.1 %
        "paged_decode_two_batch_overlap_2streams_b4": (1692.9, 1717.8, 1718.0),  # +1.5 / +1.5 %
        "spiking_csnn_lif_loop_b16": (1893.8, 1875.1, 1875.4),  # −1.0 / −1.0 %
    },
}


def test_the_blind_h100_holdout55(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blind for the model of ``holdout54``: 14 of 16 graphed times within ±10 % from the
    trace alone (median |error| 1.6 %), all 16 inside their range, 15 savings within 15
    points. The misses: the AMP unscale beside an MLP forward on the first recording, −15.6
    % (+0.2 % on the rerun; its saving +20 points): its replays are bimodal, the two streams
    side by side in some (1,344 µs) and one after the other in others (1,780 µs), and the
    schedule follows the eager trace's launch order, which put them side by side on the
    first recording and not on the rerun; and the four-crop U-Net down levels, +10.2 and
    +8.8 %, which the reshaped slowdown overcharges: −0.4 and +0.4 % with no sharing, +5.1
    and +5.3 % under the rule it replaced (GroupNorm and SiLU kernels on four streams, each
    demanding little beside the others). Over its ten multi-stream recordings: 8 within with
    the reshaped rule, 9 with the one it replaced, 9 with no sharing. Every step verdict as
    replay did: four launch-bound, four compute-bound, on both recordings."""
    from conftest import step_verdicts_agreeing_with_replay

    from traceinspect.analysis.estimate import schedule

    with monkeypatch.context() as m:
        _timing_where_waits_gave_none(m)
        judged = _fresh_rows("h100_holdout55")
    assert_summary(list(judged.values()), 16, 14, 0.0156, 16)
    missed = {k for k, r in judged.items() if abs(r.error_frac) > 0.10}
    assert missed == {
        ("h100_holdout55", "amp_unscale_clip_gpt2_beside_mlp_forward_2streams"),
        ("h100_holdout55", "multicrop_unet_down_level_4streams_b2"),
    }
    assert sum(abs(r.saving_error_points) <= 15 for r in judged.values()) == 15
    # Since timing coincidences no longer stand in where the program's waits gave no
    # dependency, the AMP step reads its two streams side by side on both recordings (−15.9 %
    # on both, below both ranges): the rerun's +0.2 % came of one coincidence in its eager
    # trace that chained the MLP's forward after the unscale, as the slow replays ran.
    rows = _pair_rows("h100_holdout55")
    assert_summary(list(rows.values()), 16, 13, 0.0163, 14)
    amp = "amp_unscale_clip_gpt2_beside_mlp_forward_2streams"
    reads = [rows[r, amp] for r in ("h100_holdout55", "h100_holdout55_rerun")]
    assert [round(r.error_frac, 3) for r in reads] == [-0.159, -0.159]
    assert not any(r.graphed_inside for r in reads)
    for recording in ("h100_holdout55", "h100_holdout55_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {
            "compute-bound": 4,
            "launch-bound": 4,
        }
    now = _stream_errors("h100_holdout55")
    with monkeypatch.context() as m:
        _as_judged_on_holdout53(m)
        refined = _stream_errors("h100_holdout55")
    monkeypatch.setattr(schedule, "BANDWIDTH_LATENCY_NS", 0.0)
    none = _stream_errors("h100_holdout55")
    assert len(now) == 10
    # (8, 9 and 9 until the AMP step's rerun lost its timing coincidence, above)
    assert [sum(abs(e) <= 0.10 for e in d.values()) for d in (now, refined, none)] == [7, 9, 8]
    unet = ("h100_holdout55", "multicrop_unet_down_level_4streams_b2")
    assert (round(none[unet], 3), round(refined[unet], 3), round(now[unet], 3)) == (
        -0.004,
        0.051,
        0.102,
    )


EXPECTED_56: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout56": {
        "adan_foreach_vit_s16_update": (2222.6, 2219.9, 2219.8),  # −0.1 / −0.1 %
        # +31.2 / +31.2 % as judged (library joins read as waiting on every stream)
        "hifigan_mpd_beside_msd_2streams_b4": (5493.5, 5384.7, 5384.0),  # −2.0 / −2.0 %
        "ladder_side_vit_b16_2streams_b8": (3320.1, 2597.8, 2598.6),  # −21.8 / −21.7 %
        "mmoe_ctr_cvr_4streams_b2048": (719.2, 800.8, 801.6),  # +11.3 / +11.5 %
        "sam_mask_decoder_box_prompts_b8": (3591.6, 3611.3, 3611.7),  # +0.5 / +0.6 %
        "sasrec_full_ranking_topk_b256": (2090.7, 2129.3, 2128.7),  # +1.8 / +1.8 %
        "sdxl_dual_text_encoders_2streams_b4": (3103.0, 3176.5, 3173.1),  # +2.4 / +2.3 %
    },
    "h100_holdout56_rerun": {
        "adan_foreach_vit_s16_update": (2223.2, 2222.3, 2221.7),  # −0.0 / −0.1 %
        # +32.2 / +32.3 % as judged
        "hifigan_mpd_beside_msd_2streams_b4": (5484.1, 5488.5, 5489.7),  # +0.1 / +0.1 %
        "ladder_side_vit_b16_2streams_b8": (3322.5, 2602.1, 2603.0),  # −21.7 / −21.7 %
        "mmoe_ctr_cvr_4streams_b2048": (720.6, 799.5, 799.6),  # +10.9 / +11.0 %
        "sam_mask_decoder_box_prompts_b8": (3588.3, 3604.5, 3604.0),  # +0.5 / +0.4 %
        "sasrec_full_ranking_topk_b256": (2086.5, 2127.0, 2127.6),  # +1.9 / +2.0 %
        "sdxl_dual_text_encoders_2streams_b4": (3120.4, 3125.6, 3125.6),  # +0.2 / +0.2 %
    },
    # recorded again with the collector fixed (new inputs roll only batch-major tensors),
    # another H100 lease, the model unchanged
    "h100_holdout56_sage": {
        "hetero_sage_movielens_3streams_b1": (3216.3, 3226.0, 3225.3),  # +0.3 / +0.3 %
    },
    "h100_holdout56_sage_rerun": {
        "hetero_sage_movielens_3streams_b1": (3197.1, 3158.9, 3160.3),  # −1.2 / −1.2 %
    },
}


def test_the_blind_h100_holdout56(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blind for the model of ``holdout55`` and for the range carrying the multi-stream
    schedule's own error (both set before any of its workloads ran on a GPU): 10 of 16 graphed
    times within ±10 % from the trace alone (median |error| 1.9 %), 11 inside their range (10
    without the schedule's share), all 16 savings within 15 points. The heterogeneous
    GraphSAGE step failed on both of the set's recordings: the collector's new inputs rolled
    its (2, E) edge list of (user, movie) pairs along its first dimension, so its user row
    indexed the movie table (a device-side assert); recorded again with that fixed, on
    another lease with the model unchanged (``h100_holdout56_sage``), it reads +0.3 / −1.2 %.
    The three steps on one stream read within 2 %; of the ten multi-stream recordings 4
    come within (SDXL's text encoders, the GraphSAGE relations), the misses HiFi-GAN's
    two discriminators, +31.2 / +32.3 % (cuDNN runs each grouped convolution of the scale
    discriminator as eight kernels on streams of its own, 2,123 nodes on 11 streams), the
    Ladder side network beside a bf16 ViT-B/16, −21.7 / −21.7 % (its FP32 GEMMs ran 131-135
    µs in the replay beside the backbone's cooperative GEMMs, 26 µs in the eager trace and
    the schedule), and MMoE's four FP32 experts on four streams, +11.5 / +11.0 % (the replay
    overlapped three of them where the schedule runs two at a time). Every step verdict as
    replay did: two compute-bound, four launch-bound, one mixed, on both recordings."""
    from conftest import step_verdicts_agreeing_with_replay

    with monkeypatch.context() as m:
        _joins_as_before_holdout58(m)
        first = _fresh_rows("h100_holdout56")
        rows = first | _fresh_rows("h100_holdout56_sage")
    assert not any(name == "hetero_sage_movielens_3streams_b1" for _, name in first)
    assert_summary(list(rows.values()), 16, 10, 0.0189, 11)
    missed = {name for (_, name), r in rows.items() if abs(r.error_frac) > 0.10}
    assert missed == {
        "hifigan_mpd_beside_msd_2streams_b4",
        "ladder_side_vit_b16_2streams_b8",
        "mmoe_ctr_cvr_4streams_b2048",
    }
    side = [abs(r.error_frac) for (_, name), r in rows.items() if "streams" in name]
    assert (len(side), sum(e <= 0.10 for e in side)) == (10, 4)
    assert sum(abs(r.saving_error_points) <= 15 for r in rows.values()) == 16
    for recording in ("h100_holdout56_sage", "h100_holdout56_sage_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {"compute-bound": 1}
    for recording in ("h100_holdout56", "h100_holdout56_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {
            "compute-bound": 2,
            "launch-bound": 4,
            "mixed": 1,
        }
    with monkeypatch.context() as m:
        _joins_as_before_holdout58(m)
        _range_as_before_holdout56(m)
        before = _fresh_rows("h100_holdout56") | _fresh_rows("h100_holdout56_sage")
    assert sum(r.graphed_inside for r in before.values()) == 10
    outside = {name for (_, name), r in before.items() if not r.graphed_inside}
    assert outside == {
        "hifigan_mpd_beside_msd_2streams_b4",
        "ladder_side_vit_b16_2streams_b8",
        "mmoe_ctr_cvr_4streams_b2048",
    }


def test_library_joins_judged_on_h100_holdout56() -> None:
    """cuDNN's joins read as waiting only on the library's streams and the operator's own
    (:func:`traceinspect.analysis.estimate.dependencies._operator_streams`), set after
    ``holdout56`` was judged: HiFi-GAN's discriminators +31.2 / +32.3 % -> −2.0 / +0.1 %,
    both inside their range; the set reads 12 of 16 within ±10 % (median 1.5 %), 13 inside,
    every saving within 15 points. The misses left are the Ladder side network and MMoE."""
    rows = _pair_rows("h100_holdout56") | _pair_rows("h100_holdout56_sage")
    assert_summary(list(rows.values()), 16, 12, 0.0148, 13)
    hifigan = [r for (_, name), r in rows.items() if name.startswith("hifigan")]
    assert [round(r.error_frac, 3) for r in hifigan] == [-0.020, 0.001]
    assert all(r.graphed_inside for r in hifigan)
    assert sum(abs(r.saving_error_points) <= 15 for r in rows.values()) == 16


EXPECTED_57: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout57": {
        "autoformer_etth1_autocorrelation_b32": (7446.4, 7499.2, 7497.8),  # +0.7 / +0.7 %
        "dien_augru_interest_evolution_b512": (1994.6, 1894.2, 1880.1),  # −5.0 / −5.7 %
        "dinov2_vits14_student_teacher_3streams_b4": (4112.3, 4363.4, 4362.0),  # +6.1 / +6.1 %
        "owlvit_b32_image_text_queries_2streams_b2": (3879.8, 3775.4, 3775.2),  # −2.7 / −2.7 %
        "sd3_mmdit_joint_blocks_2streams_b2": (2919.5, 2962.0, 2959.6),  # +1.5 / +1.4 %
        # −0.1 / −0.1 %
        "svd_image_conditioning_vae_beside_clip_2streams_b1": (6028.2, 6023.0, 6019.7),
        "vocos_mel_istft_vocoder_b16": (1555.0, 1579.3, 1579.6),  # +1.6 / +1.6 %
        "wav2lip_face_audio_encoders_2streams_b16": (3029.7, 3084.3, 3082.6),  # +1.8 / +1.7 %
    },
    # recorded again on 2026-12-06 (14:58 UTC), at the end of the lease that recorded
    # holdout60; SVD's step +23.1 % as the model then stood (below)
    "h100_holdout57_rerun": {
        # +1.0 / +1.0 %
        "autoformer_etth1_autocorrelation_b32": (7419.3, 7494.2, 7496.1),
        # −3.2 / −3.3 %
        "dien_augru_interest_evolution_b512": (1937.6, 1875.9, 1872.8),
        # +6.5 / +6.5 %
        "dinov2_vits14_student_teacher_3streams_b4": (4097.8, 4365.0, 4365.2),
        # −2.3 / −2.3 %
        "owlvit_b32_image_text_queries_2streams_b2": (3870.4, 3781.4, 3781.7),
        # +1.7 / +1.8 %
        "sd3_mmdit_joint_blocks_2streams_b2": (2905.1, 2953.9, 2957.2),
        # +0.3 / +0.3 %
        "svd_image_conditioning_vae_beside_clip_2streams_b1": (5996.6, 6013.1, 6012.3),
        # +1.6 / +1.6 %
        "vocos_mel_istft_vocoder_b16": (1545.4, 1570.0, 1570.0),
        # +2.3 / +2.3 %
        "wav2lip_face_audio_encoders_2streams_b16": (3021.8, 3090.5, 3090.1),
    },
}


def test_the_blind_h100_holdout57() -> None:
    """Blind for the model as ``holdout56`` judged it (unchanged since; the collector's new
    inputs fixed before it): eight workloads recorded once on an H100 (the device time left
    held one recording), five of them on side streams — SD3's MM-DiT joint blocks with image
    and text tokens on two streams, Stable Video Diffusion's VAE encoder beside CLIP ViT-H/14,
    DINOv2's teacher and two student passes on three streams, Wav2Lip's face and audio
    encoders, OWL-ViT's image and text towers — and three on one stream (DIEN's AUGRU loop,
    Autoformer's Auto-Correlation, the Vocos vocoder). From the trace alone all 8 within ±10
    % (median |error| 1.7 %, worst DINOv2's three streams +6.1 %), all 8 inside their range
    (8 without the schedule's share as well), all 8 savings within 15 points (median 2.5
    points), every step verdict launch-bound as replay saved 33-81 %."""
    from conftest import step_verdicts_agreeing_with_replay

    rows = recording_rows("h100_holdout57", False)
    assert_summary(list(rows.values()), 8, 8, 0.0167, 8)
    assert max(abs(r.error_frac) for r in rows.values()) == pytest.approx(0.061, abs=0.001)
    side = [n for n in rows if "streams" in n]
    assert len(side) == 5 and all(abs(rows[n].error_frac) <= 0.10 for n in side)
    assert sum(abs(r.saving_error_points) <= 15 for r in rows.values()) == 8
    workloads = validation_workloads(VALIDATION_DIR / "h100_holdout57")
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 8}


def test_the_h100_holdout57_rerun_chained_svds_branches_by_coincidence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """holdout57 recorded again, on the lease that recorded holdout60: with the model as it
    stood (timing coincidences standing in where the program's waits gave no dependency,
    :func:`_timing_where_waits_gave_none`), 7 of 8 within ±10 %. The miss: Stable Video
    Diffusion's VAE encoder beside CLIP's image tower, +23.1 % and above its range, where its
    first recording read −0.1 %. Forked at the step's start and joined at its end, the two
    branches have no dependency the waits tell; on the first recording the eager trace ran
    them one after the other and the timing rule found none either, on the rerun their
    kernels interleaved and four coincidences chained CLIP's tower after the VAE. Since the
    timing rule no longer stands in where the launching threads made stream waits: +0.3 %,
    8 of 8 within (median 2.0 %), all inside, all savings within 15 points."""
    from conftest import step_verdicts_agreeing_with_replay

    svd = "svd_image_conditioning_vae_beside_clip_2streams_b1"
    with monkeypatch.context() as m:
        _timing_where_waits_gave_none(m)
        judged = _fresh_rows("h100_holdout57")
    rerun = {n: r for (rec, n), r in judged.items() if rec == "h100_holdout57_rerun"}
    assert_summary(list(rerun.values()), 8, 7, 0.0227, 7)
    assert round(rerun[svd].error_frac, 3) == 0.231
    assert round(judged["h100_holdout57", svd].error_frac, 3) == -0.001
    rows = recording_rows("h100_holdout57_rerun", False)
    assert_summary(list(rows.values()), 8, 8, 0.0197, 8)
    assert round(rows[svd].error_frac, 3) == 0.003
    assert sum(abs(r.saving_error_points) <= 15 for r in rows.values()) == 8
    workloads = validation_workloads(VALIDATION_DIR / "h100_holdout57_rerun")
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 8}


EXPECTED_58: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout58": {
        # +1.0 / +1.0 %
        "av_hubert_base_lip_beside_audio_frontends_2streams_b8": (8211.2, 8293.1, 8294.1),
        "dcrnn_metr_la_seq2seq_b8": (7258.1, 7198.3, 7198.3),  # −0.8 / −0.8 %
        "diff_transformer_3b_prefill_b2": (6821.3, 6875.1, 6875.4),  # +0.8 / +0.8 %
        # −1.5 / −1.5 %
        "finalmlp_criteo_feature_gated_towers_2streams_b10000": (4999.4, 4923.9, 4924.1),
        # −0.3 / −0.3 %
        "openflamingo_9b_resampler_beside_mpt_2streams_b4": (4381.5, 4367.9, 4368.4),
        "pna_zinc_aggregators_4streams_b128": (1996.5, 1976.3, 1976.3),  # −1.0 / −1.0 %
        "real_esrgan_x4plus_rrdbnet_b1": (9401.3, 9339.6, 9338.5),  # −0.7 / −0.7 %
        "yolact_r50_protonet_beside_heads_2streams_b2": (6291.9, 6325.6, 6325.8),  # +0.5 / +0.5 %
    },
    "h100_holdout58_rerun": {
        # +1.3 / +1.3 %
        "av_hubert_base_lip_beside_audio_frontends_2streams_b8": (8205.6, 8315.2, 8316.1),
        "dcrnn_metr_la_seq2seq_b8": (7315.0, 7233.1, 7232.8),  # −1.1 / −1.1 %
        "diff_transformer_3b_prefill_b2": (6822.5, 6876.0, 6875.9),  # +0.8 / +0.8 %
        # −2.0 / −2.0 %
        "finalmlp_criteo_feature_gated_towers_2streams_b10000": (5017.9, 4916.9, 4916.7),
        # −0.8 / −0.8 %
        "openflamingo_9b_resampler_beside_mpt_2streams_b4": (4390.9, 4355.8, 4354.1),
        "pna_zinc_aggregators_4streams_b128": (2000.7, 1973.6, 1971.1),  # −1.4 / −1.5 %
        "real_esrgan_x4plus_rrdbnet_b1": (9402.8, 9343.2, 9341.8),  # −0.6 / −0.6 %
        "yolact_r50_protonet_beside_heads_2streams_b2": (6321.2, 6345.8, 6343.3),  # +0.4 / +0.3 %
    },
}


def test_the_blind_h100_holdout58() -> None:
    """Blind for the model with cuDNN's joins read as after ``holdout56`` (committed before
    any of its workloads ran on a GPU): eight workloads recorded twice on one H100 lease, five
    of them on side streams — OpenFlamingo-9B's ViT-L/14 and Perceiver Resampler beside three
    MPT-7B layers, YOLACT's protonet beside its prediction heads, FinalMLP's two gated towers,
    AV-HuBERT's lip front end beside its audio projection, PNA's four aggregators on four
    streams — and three on one stream (DCRNN's seq2seq of 48 diffusion-convolution GRU steps,
    Real-ESRGAN's RRDBNet, a DIFF Transformer prefill). Long steps (2-9 ms). From the trace
    alone all 16 within ±10 % (median |error| 0.8 %, worst 2.0 %), all 16 inside their
    range, all 16 savings within 15 points (median 2.5 points), every step verdict as replay
    did. None of its graphs has a library join the new rule reads otherwise: it judges the
    model around it, not the rule."""
    from conftest import step_verdicts_agreeing_with_replay

    rows = _pair_rows("h100_holdout58")
    assert_summary(list(rows.values()), 16, 16, 0.0083, 16)
    assert max(abs(r.error_frac) for r in rows.values()) == pytest.approx(0.020, abs=0.001)
    side = [k for k in rows if "streams" in k[1]]
    assert len(side) == 10
    assert sum(abs(r.saving_error_points) <= 15 for r in rows.values()) == 16
    verdicts = {
        "h100_holdout58": {"compute-bound": 2, "launch-bound": 5, "mixed": 1},
        "h100_holdout58_rerun": {"compute-bound": 2, "launch-bound": 6},
    }
    for recording, agreeing in verdicts.items():
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == agreeing


EXPECTED_59: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout59": {
        "encodec_seanet_lstm_beside_msstftd_2streams_b2": (2470.7, 2419.6, 2418.5),  # −2.1 / −2.1 %
        "melgan_generator_beside_msd_2streams_b4": (4872.3, 4604.0, 4604.6),  # −5.5 / −5.5 %
        # −4.3 / −4.4 %
        "multiband_melgan_msd_beside_stft_losses_2streams_b8": (1810.2, 1731.6, 1731.3),
        # −7.0 / −7.1 %
        "sv2tts_tacotron2_encoder_beside_ge2e_lstm_2streams_b8": (2293.8, 2134.2, 2131.9),
        # −5.3 / −5.4 %
        "vits_posterior_flow_beside_scale_discriminator_2streams_b4": (2553.7, 2418.0, 2416.2),
    },
    # the device time held four of the five again (MelGAN's generator not)
    "h100_holdout59_rerun": {
        "encodec_seanet_lstm_beside_msstftd_2streams_b2": (2517.3, 2427.4, 2423.1),  # −3.6 / −3.7 %
        # −6.8 / −7.1 %
        "multiband_melgan_msd_beside_stft_losses_2streams_b8": (1867.9, 1741.8, 1734.6),
        # −7.3 / −7.6 %
        "sv2tts_tacotron2_encoder_beside_ge2e_lstm_2streams_b8": (2307.8, 2138.3, 2132.9),
        # −7.5 / −8.3 %
        "vits_posterior_flow_beside_scale_discriminator_2streams_b4": (2641.2, 2443.8, 2421.7),
    },
}


def test_the_blind_h100_holdout59(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blind for cuDNN's joins as read after ``holdout56`` (written to judge that rule and
    committed before any of its workloads ran on a GPU): five steps with a cuDNN operator
    that forks onto cuDNN's own streams on one program side stream beside other work on
    another — MelGAN's generator beside its multi-scale discriminator, VITS's posterior
    encoder and flow beside its scale discriminator, Multi-band MelGAN's discriminator
    beside multi-resolution STFT losses, EnCodec's SEANet encoder with its LSTM beside the
    MS-STFT discriminator, SV2TTS's Tacotron 2 encoder beside the GE2E speaker LSTM —
    recorded once, and four of them again, on one H100 lease. From the trace alone all 9
    within ±10 % (median |error| 4.4 %, worst VITS −8.3 %), all 9 inside their range, all 9
    savings within 15 points (median 2.0 points), every step verdict launch-bound as replay
    saved 71-91 %. With the joins as they were (:func:`_joins_as_before_holdout58`) 7 of 9:
    VITS, whose scale discriminator's grouped convolutions cuDNN forks onto eight streams,
    +19.3 / +15.3 % (−5.4 / −8.3 %), both outside their range; MelGAN +1.7 % (−5.5 %)."""
    from conftest import step_verdicts_agreeing_with_replay

    from traceinspect.analysis.estimate import occurrence

    with monkeypatch.context() as m:  # the prediction as it stood when they were recorded
        m.setattr(occurrence, "HANDOVER_WEIGHT", 0.0)
        recorded = _fresh_rows("h100_holdout59")
    assert_summary(list(recorded.values()), 9, 9, 0.0436, 9)
    # since the prediction reads cuDNN's hand-overs half way: SV2TTS's 3-layer LSTM
    # +1.1 / +0.4 → −7.1 / −7.6 %
    rows = _pair_rows("h100_holdout59")
    assert_summary(list(rows.values()), 9, 9, 0.0549, 9)
    assert max(abs(r.error_frac) for r in rows.values()) == pytest.approx(0.083, abs=0.001)
    assert sum(abs(r.saving_error_points) <= 15 for r in rows.values()) == 9
    for recording, count in (("h100_holdout59", 5), ("h100_holdout59_rerun", 4)):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": count}
    with monkeypatch.context() as m:
        _joins_as_before_holdout58(m)
        m.setattr(occurrence, "HANDOVER_WEIGHT", 0.0)
        before = _fresh_rows("h100_holdout59")
    assert_summary(list(before.values()), 9, 7, 0.0353, 7)
    vits = [r for (_, name), r in before.items() if name.startswith("vits")]
    assert [round(r.error_frac, 3) for r in vits] == [0.193, 0.153]
    assert not any(r.graphed_inside for r in vits)


EXPECTED_60: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout60": {
        # −4.9 / −5.1 %
        "awd_lstm_char_ptb_tied_tf32_one_stream_b32": (2606.6, 2479.8, 2473.9),
        # −5.9 / −6.0 %
        "deepspeech2_conv_bigru_one_stream_b8": (1416.6, 1332.7, 1331.7),
        # −0.9 / −1.0 %
        "esim_bilstm_encoders_2streams_b32": (1889.8, 1872.5, 1870.5),
        # +1.1 / +1.0 %
        "gnmt_lstm_encoder_residual_one_stream_b1": (1053.6, 1065.0, 1064.0),
        # −3.4 / −4.2 %
        "gru4rec_session_beside_item_tower_2streams_b64": (527.8, 509.6, 505.5),
        # +5.2 / +5.0 %
        "las_listener_bilstm_beside_speller_2streams_b4": (1312.0, 1380.2, 1377.3),
        # −6.8 / −6.8 %
        "metricgan_plus_bilstm_beside_metric_disc_2streams_b8": (2387.8, 2226.7, 2225.1),
        # +12.7 / +12.7 %
        "tpa_lstm_electricity_fp32_one_stream_b32": (2299.5, 2592.5, 2591.0),
    },
    "h100_holdout60_rerun": {
        # −4.9 / −5.1 %
        "awd_lstm_char_ptb_tied_tf32_one_stream_b32": (2608.8, 2481.6, 2476.6),
        # −6.1 / −6.2 %
        "deepspeech2_conv_bigru_one_stream_b8": (1415.8, 1329.1, 1328.2),
        # −0.7 / −0.8 %
        "esim_bilstm_encoders_2streams_b32": (1889.9, 1877.3, 1875.3),
        # +1.3 / +1.2 %
        "gnmt_lstm_encoder_residual_one_stream_b1": (1053.4, 1067.4, 1066.4),
        # −3.6 / −4.4 %
        "gru4rec_session_beside_item_tower_2streams_b64": (529.0, 509.7, 505.5),
        # +5.2 / +4.9 %
        "las_listener_bilstm_beside_speller_2streams_b4": (1311.5, 1379.1, 1375.8),
        # −6.6 / −6.7 %
        "metricgan_plus_bilstm_beside_metric_disc_2streams_b8": (2386.0, 2228.3, 2226.3),
        # +13.0 / +13.0 %
        "tpa_lstm_electricity_fp32_one_stream_b32": (2290.2, 2588.3, 2587.3),
    },
}


def test_the_blind_h100_holdout60(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blind (written before the range's low end read cuDNN's hand-overs, committed after it
    and recorded after it, twice on one H100 lease on 2026-12-06, 14:49-14:57 UTC; an H200
    was asked for and none started): eight steps built around cuDNN's multi-layer RNNs —
    Deep Speech 2's 3-layer BiGRU (fp16), the GNMT encoder at batch 1 (bf16), AWD-LSTM
    (fp32, TF32 on), TPA-LSTM's 4-layer LSTM (fp32, TF32 off) on one stream; GRU4Rec beside
    an item tower, MetricGAN+'s BiLSTM beside its discriminator, Listen-Attend-Spell's
    listener beside its speller, ESIM's BiLSTM encoders on two side streams. From the trace
    alone 7 of 8 within ±10 % on each recording (median |error| 6.1 and 6.2 %), all 16
    inside their range, all 16 savings within 15 points, every step verdict launch-bound as
    replay saved 31-83 %. The miss: TPA-LSTM, +39.5 / +39.7 %: its four layers wait a chunk
    late each, as the prediction reads cuDNN's hand-overs (``holdout46``'s three +15 %);
    read handed over it is −14.1 / −13.8 %, and the range's low end, which takes that
    reading, keeps it inside (below it without: low end 2,888 µs, measured 2,300). The same
    reading as the prediction would read 7 of 8 within on each too (median 7.0 %), every
    RNN shorter: AWD-LSTM −8.9, GNMT −7.4, GRU4Rec −7.3 %. Since the prediction reads the
    hand-overs half way (``occurrence.HANDOVER_WEIGHT``, set after these recordings and on
    them among others): TPA-LSTM +12.7 / +13.0 %, still the miss, the set's median 5.0 %."""
    from conftest import step_verdicts_agreeing_with_replay

    from traceinspect.analysis.estimate import dependencies, occurrence

    tpa = "tpa_lstm_electricity_fp32_one_stream_b32"
    with monkeypatch.context() as m:  # the prediction as it stood when they were recorded
        m.setattr(occurrence, "HANDOVER_WEIGHT", 0.0)
        recorded = _fresh_rows("h100_holdout60")
    for rows, median, errors in (
        (recorded, 0.0616, [0.395, 0.397]),
        (_pair_rows("h100_holdout60"), 0.0502, [0.127, 0.13]),
    ):
        assert_summary(list(rows.values()), 16, 14, median, 16)
        assert {n for (_, n), r in rows.items() if abs(r.error_frac) > 0.10} == {tpa}
        recordings = ("h100_holdout60", "h100_holdout60_rerun")
        assert [round(rows[r, tpa].error_frac, 3) for r in recordings] == errors
        assert sum(abs(r.saving_error_points) <= 15 for r in rows.values()) == 16
    for recording in ("h100_holdout60", "h100_holdout60_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 8}
    with monkeypatch.context() as m:
        m.setattr(occurrence, "hands_over", lambda cols, rows: False)
        without = _fresh_rows("h100_holdout60")
    assert sum(r.graphed_inside for r in without.values()) == 14
    assert not any(r.graphed_inside for (_, n), r in without.items() if n == tpa)
    original = dependencies.infer_dependencies

    def handed_over(*args: Any, **kwargs: Any) -> Any:
        return original(*args, **{**kwargs, "pipelined": True})

    monkeypatch.setattr(occurrence, "infer_dependencies", handed_over)
    handed = _fresh_rows("h100_holdout60")
    assert_summary(list(handed.values()), 16, 14, 0.0703, 16)
    assert [
        round(handed[r, tpa].error_frac, 3) for r in ("h100_holdout60", "h100_holdout60_rerun")
    ] == [-0.141, -0.138]


EXPECTED_61: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout61": {
        # +2.0 / +2.2 %
        "anp_deterministic_beside_latent_path_celeba32_2streams_b32": (985.4, 1004.9, 1006.6),
        "danet_pam_beside_cam_ade20k_2streams_b2": (1504.7, 1423.9, 1421.1),  # −5.4 / −5.6 %
        # +0.5 / +0.5 %
        "fibinet_criteo_senet_bilinear_fp16_one_stream_b4096": (1743.9, 1753.5, 1752.6),
        # −1.2 / −1.2 %
        "glow_cifar10_lu_affine_coupling_tf32_one_stream_b32": (4427.3, 4372.3, 4371.9),
        "memn2n_ptb_lm_6hops_fp32_one_stream_b512": (558.6, 558.8, 558.7),  # +0.0 / +0.0 %
        "mionet_two_branches_beside_trunk_3streams_b2048": (670.2, 678.9, 675.3),  # +1.3 / +0.8 %
        # −1.7 / −1.8 %
        "muzero_go9x9_unroll5_sgd_train_bf16_one_stream_b128": (6538.8, 6428.8, 6417.7),
        # +1.3 / +1.3 %
        "relation_network_clevr_cnn_beside_lstm_2streams_b64": (1678.7, 1699.9, 1700.6),
    },
    "h100_holdout61_rerun": {
        # +1.7 / +1.9 %
        "anp_deterministic_beside_latent_path_celeba32_2streams_b32": (985.8, 1002.9, 1004.5),
        "danet_pam_beside_cam_ade20k_2streams_b2": (1446.5, 1421.1, 1420.2),  # −1.8 / −1.8 %
        # +0.6 / +0.6 %
        "fibinet_criteo_senet_bilinear_fp16_one_stream_b4096": (1739.1, 1748.8, 1748.9),
        # −1.1 / −1.1 %
        "glow_cifar10_lu_affine_coupling_tf32_one_stream_b32": (4425.9, 4375.1, 4374.8),
        "memn2n_ptb_lm_6hops_fp32_one_stream_b512": (553.9, 553.8, 554.3),  # −0.0 / +0.1 %
        "mionet_two_branches_beside_trunk_3streams_b2048": (660.8, 673.8, 676.7),  # +2.0 / +2.4 %
        # −2.0 / −2.1 %
        "muzero_go9x9_unroll5_sgd_train_bf16_one_stream_b128": (6562.4, 6431.9, 6421.5),
        # +1.6 / +1.5 %
        "relation_network_clevr_cnn_beside_lstm_2streams_b64": (1679.6, 1706.7, 1704.5),
    },
}


def test_the_blind_h100_holdout61() -> None:
    """Blind (eight families no earlier set holds, written while the model stood at 9b0b9a6,
    committed before any ran on a GPU, recorded twice on one H100 lease on 2026-12-06,
    16:45-16:56 UTC, after an H200 was asked for and none started; the prediction's reading
    of cuDNN's hand-overs, changed after them, moves none of them): Glow's multi-scale flow
    (TF32, 1,258 nodes), a MuZero learner step (bf16 autocast, 1,739 nodes), FiBiNET (fp16)
    and an End-To-End Memory Network (fp32) on one stream; DANet's position beside channel
    attention, MIONet's branch nets beside its trunk on three streams, an Attentive Neural
    Process's two paths and a Relation Network's CNN beside its question LSTM on side
    streams. From the trace alone all 16 within ±10 % (median |error| 1.4 %, worst DANet
    −5.6 %), all 16 inside their range, 14 of 16 savings within 15 points. The misses are
    DANet's (−32.8 / −16.0 points): its eager time is bimodal, the fresh process's rounds
    1.59 ms then 2.40-2.50 ms, the profiled process's every round 1.56-1.58 ms; the model
    reads 1.49 ms and calls the step compute-bound with 6-8 % to gain, which it is at the
    profiled process's pace (replay 7 % faster), not at the fresh process's (38 / 23 %)."""
    import json

    from conftest import step_read, step_verdicts_agreeing_with_replay

    rows = _pair_rows("h100_holdout61")
    assert_summary(list(rows.values()), 16, 16, 0.0138, 16)
    assert max(abs(r.error_frac) for r in rows.values()) == pytest.approx(0.0556, abs=0.001)
    danet = "danet_pam_beside_cam_ade20k_2streams_b2"
    misses = {k: round(r.saving_error_points, 1) for k, r in rows.items()}
    assert {k: v for k, v in misses.items() if abs(v) > 15} == {
        ("h100_holdout61", danet): -32.8,
        ("h100_holdout61_rerun", danet): -16.0,
    }
    for recording, saving in (("h100_holdout61", 0.06), ("h100_holdout61_rerun", 0.08)):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        rest = [w for w in workloads if w.name != danet]
        assert step_verdicts_agreeing_with_replay(rest) == {"launch-bound": 6, "compute-bound": 1}
        (w,) = [w for w in workloads if w.name == danet]
        verdict, predicted = step_read(w)
        assert (verdict, round(predicted or 0.0, 2)) == ("compute-bound", saving)
        assert w.saving > 0.20  # against the fresh process's eager p50
        results = json.loads((w.trace.parent / "results.json").read_text())
        by_mode = {r["mode"]: r for r in results["rows"]}
        profiled = by_mode["eager"]["in_profiled_process"]["round_host_p50_ns"]
        assert 1_550_000 < min(profiled) and max(profiled) < 1_590_000
        assert 1 - by_mode["graphed"]["host_p50_ns"] / statistics.median(profiled) < 0.10


EXPECTED_62: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout62": {
        # −1.9 / −2.0 %
        "cornell_chatbot_bigru_encoder_luong_decoder_bf16_one_stream_b64": (1672.3, 1641.0, 1638.3),
        # −0.9 / −1.0 %
        "crn_speech_enhancement_lstm_bottleneck_fp16_one_stream_b8": (1441.0, 1428.0, 1426.0),
        # +4.5 / +4.4 %
        "elmo_char_cnn_forward_beside_backward_lstm_fp16_2streams_b16": (2196.5, 2295.0, 2294.2),
        # +2.1 / +2.1 %
        "focalnet_tiny_srf_imagenet_bf16_one_stream_b16": (3796.8, 3874.8, 3874.9),
        # −6.4 / −6.4 %
        "performance_rnn_3layer_lstm_eval_fp32_one_stream_b64": (2634.6, 2466.9, 2465.6),
        # −0.4 / −0.4 %
        "sknet50_selective_kernel_paths_fp16_2streams_b16": (4011.2, 3994.7, 3995.0),
        # +0.9 / +1.6 %
        "wdr_eta_route_lstm_beside_wide_deep_tf32_2streams_b64": (781.3, 788.1, 793.9),
    },
}


def test_the_blind_h100_holdout62(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blind for the prediction's reading of cuDNN's hand-overs half way (written after it was
    committed, frozen before any ran on a GPU, recorded once on an H100 on 2026-12-06,
    18:13-18:17 UTC, after an H200 was asked for; the device time left ran out before PANNs,
    the eighth): five steps built around cuDNN's multi-layer RNNs — a CRN speech enhancer's
    2-layer LSTM (fp16), Performance RNN's 3-layer LSTM (fp32), the Cornell chatbot's BiGRU
    encoder and GRU decoder (bf16) on one stream; ELMo's two 2-layer LSTMs side by side
    (fp16) and a Wide-Deep-Recurrent ETA model's 4-layer LSTM beside its wide and deep parts
    (TF32) — and FocalNet-T, SKNet-50's selective-kernel paths on two streams. From the
    trace alone all 7 within ±10 % (median |error| 2.0 %, worst Performance RNN −6.4 %), all
    7 inside their range, all 7 savings within 15 points, every step launch-bound as replay
    saved 15-63 %. Read a chunk late, as the model stood before (``HANDOVER_WEIGHT`` 0), 6
    of 7: Performance RNN −13.0 %; the four RNNs that hand over read a mean 6.0 % off that
    way, 3.5 % half way."""
    from conftest import step_verdicts_agreeing_with_replay

    from traceinspect.analysis.estimate import occurrence

    rows = recording_rows("h100_holdout62", False)
    assert_summary(list(rows.values()), 7, 7, 0.0204, 7)
    assert max(abs(r.error_frac) for r in rows.values()) == pytest.approx(0.0641, abs=0.001)
    assert all(abs(r.saving_error_points) <= 15 for r in rows.values())
    workloads = validation_workloads(VALIDATION_DIR / "h100_holdout62")
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 7}
    monkeypatch.setattr(occurrence, "HANDOVER_WEIGHT", 0.0)
    late = {w.name: fresh_row(w) for w in workloads}
    assert sum(abs(r.error_frac) <= 0.10 for r in late.values()) == 6
    rnn = "performance_rnn_3layer_lstm_eval_fp32_one_stream_b64"
    assert round(late[rnn].error_frac, 3) == -0.13
    moved = [n for n in rows if abs(rows[n].error_frac - late[n].error_frac) > 0.001]
    assert len(moved) == 4
    mean = statistics.mean
    assert mean(abs(late[n].error_frac) for n in moved) == pytest.approx(0.060, abs=0.001)
    assert mean(abs(rows[n].error_frac) for n in moved) == pytest.approx(0.0345, abs=0.001)


EXPECTED_65: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout65": {
        # +0.1 / −0.1 %
        "albert_base_v2_shared_layer_sst2_padded_fp16_one_stream_b64": (3982.7, 3986.8, 3980.8),
        # −1.2 / −1.3 %
        "appnp_amazon_computers_ppr_k10_index_add_fp32_one_stream_b1": (979.9, 967.7, 966.8),
        # −3.5 / −3.8 %
        "covertype_mlp_layernorm_gelu_fused_adamw_train_bf16_one_stream_b1024": (
            887.0,
            856.2,
            853.0,
        ),
        # +4.8 / +4.2 %
        "ghostnet_1_0_imagenet_ghost_modules_se_fp16_channels_last_one_stream_b1": (
            1093.2,
            1145.8,
            1139.2,
        ),
        # −0.1 / −0.1 %
        "gshard_top2_gating_capacity_16experts_dispatch_mm_bf16_one_stream_b4096": (
            5492.6,
            5489.2,
            5490.0,
        ),
        # +0.8 / +0.8 %
        "mistral_sliding_window_rolling_cache_gqa_decode_bf16_one_stream_b32": (
            7148.7,
            7205.3,
            7203.0,
        ),
        # +0.8 / +0.6 %
        "polyencoder_bert_context_beside_candidate_64codes_fp16_2streams_b32": (
            2882.1,
            2904.3,
            2900.0,
        ),
        # −0.8 / −3.6 %
        "sru_ptb_tied_lm_2layers_unroll32_cell_loop_fp16_one_stream_b32": (988.1, 980.2, 952.6),
    },
    "h100_holdout65_rerun": {
        # −0.4 / −0.5 %
        "albert_base_v2_shared_layer_sst2_padded_fp16_one_stream_b64": (4010.4, 3995.3, 3988.8),
        # −1.1 / −1.3 %
        "appnp_amazon_computers_ppr_k10_index_add_fp32_one_stream_b1": (983.0, 972.4, 970.3),
        # −2.2 / −2.4 %
        "covertype_mlp_layernorm_gelu_fused_adamw_train_bf16_one_stream_b1024": (
            876.6,
            857.6,
            855.8,
        ),
        # +3.8 / +3.7 %
        "ghostnet_1_0_imagenet_ghost_modules_se_fp16_channels_last_one_stream_b1": (
            1098.1,
            1139.5,
            1139.1,
        ),
        # −0.2 / −0.3 %
        "gshard_top2_gating_capacity_16experts_dispatch_mm_bf16_one_stream_b4096": (
            5514.1,
            5501.2,
            5499.6,
        ),
        # +1.1 / +1.0 %
        "mistral_sliding_window_rolling_cache_gqa_decode_bf16_one_stream_b32": (
            7125.1,
            7199.6,
            7196.4,
        ),
        # −0.3 / −0.3 %
        "polyencoder_bert_context_beside_candidate_64codes_fp16_2streams_b32": (
            2888.1,
            2880.0,
            2880.0,
        ),
        # −3.8 / −3.8 %
        "sru_ptb_tied_lm_2layers_unroll32_cell_loop_fp16_one_stream_b32": (989.0, 951.6, 951.5),
    },
}


def test_the_blind_h100_holdout65() -> None:
    """Blind (eight everyday families, written while the model stood at 961290d, committed
    before any ran on a GPU, recorded twice on one H100 lease on 2026-12-07, 01:25-01:36 UTC,
    after an H200 was asked for; the model frozen at 81660f5, whose fork-twin rule moves none
    of them): a Mistral-style rolling-cache GQA decode step at batch 32, ALBERT at batch 64,
    GhostNet at batch 1 (channels-last), a tabular MLP's training step with fused AdamW, an
    SRU language model's cell loop, GShard's top-2 MoE with capacity, APPNP's ten
    propagation steps over ``index_add_`` on one stream; a Poly-encoder's two BERT towers on
    two side streams. From the trace alone all 16 within ±10 % (median |error| 1.2 %, worst
    GhostNet +4.2 %), all 16 inside their range, 14 of 16 savings within 15 points. The
    misses are ALBERT's (−20.8 / −32.3 points): the fresh timing process's eager step ran on
    the GPU at 5.0-5.2 ms a round on the first recording and 4.3 ms then 6.1-7.0 ms on the
    rerun, where the profiled process's ran 4.25-4.78 ms; the model reads 4.09 ms and calls
    the step compute-bound with 3 % to gain, which it is at the profiled process's pace
    (replay 7 % faster), not at the fresh process's (23 / 35 %). GShard's rerun reads
    ``mixed`` (predicted 11 %) where replay saved 9.1 %: no contradiction."""
    import json

    from conftest import step_read, step_verdicts_agreeing_with_replay

    rows = _pair_rows("h100_holdout65")
    assert_summary(list(rows.values()), 16, 16, 0.0115, 16)
    assert max(abs(r.error_frac) for r in rows.values()) == pytest.approx(0.0421, abs=0.001)
    albert = "albert_base_v2_shared_layer_sst2_padded_fp16_one_stream_b64"
    gshard = "gshard_top2_gating_capacity_16experts_dispatch_mm_bf16_one_stream_b4096"
    misses = {k: round(r.saving_error_points, 1) for k, r in rows.items()}
    assert {k: v for k, v in misses.items() if abs(v) > 15} == {
        ("h100_holdout65", albert): -20.8,
        ("h100_holdout65_rerun", albert): -32.3,
    }
    for recording, verdicts in (
        ("h100_holdout65", {"launch-bound": 5, "compute-bound": 2}),
        ("h100_holdout65_rerun", {"launch-bound": 5, "compute-bound": 1}),
    ):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        rest = [
            w
            for w in workloads
            if w.name != albert and (w.name, recording) != (gshard, "h100_holdout65_rerun")
        ]
        assert step_verdicts_agreeing_with_replay(rest) == verdicts
        (w,) = [w for w in workloads if w.name == albert]
        verdict, predicted = step_read(w)
        assert (verdict, round(predicted or 0.0, 2)) == ("compute-bound", 0.03)
        assert w.saving > 0.20  # against the fresh process's eager p50
        results = json.loads((w.trace.parent / "results.json").read_text())
        by_mode = {r["mode"]: r for r in results["rows"]}
        profiled = by_mode["eager"]["in_profiled_process"]["round_host_p50_ns"]
        assert 4_200_000 < min(profiled) and max(profiled) < 4_800_000
        assert 1 - by_mode["graphed"]["host_p50_ns"] / statistics.median(profiled) < 0.10
    (w,) = [
        w for w in validation_workloads(VALIDATION_DIR / "h100_holdout65_rerun") if w.name == gshard
    ]
    verdict, predicted = step_read(w)
    assert (verdict, round(predicted or 0.0, 2), round(w.saving, 3)) == ("mixed", 0.11, 0.091)


EXPECTED_66: dict[str, dict[str, tuple[float, float, float]]] = {
    "h100_holdout66": {
        # +3.8 / +3.7 %
        "byol_resnet18_online_beside_target_cifar_views_fp16_2streams_b128": (
            2716.5,
            2820.7,
            2816.9,
        ),
        # +2.8 / +2.8 %
        "diffwave_ljspeech_30_residual_layers_denoise_step_fp16_one_stream_b4": (
            7260.3,
            7463.6,
            7461.4,
        ),
        # −3.3 / −3.2 %
        "mixtral_8x7b_proportions_top2_of_8_experts_decode_step_bf16_one_stream_b8": (
            1704.9,
            1649.1,
            1650.3,
        ),
        # +2.7 / +2.7 %
        "nafnet_width32_sidd_denoise_simplegate_sca_fp16_channels_last_one_stream_b4": (
            4259.5,
            4375.4,
            4374.6,
        ),
        # −0.1 / +0.0 %
        "retinanet_r50_fpn_heads_topk_decode_coco_fp16_one_stream_b2": (2801.3, 2797.1, 2801.9),
        # −1.0 / −1.0 %
        "temporal_fusion_transformer_electricity_vsn_grn_lstm_attention_fp32_one_stream_b64": (
            2618.6,
            2593.5,
            2592.2,
        ),
        # +1.2 / +1.1 %
        "word2vec_skipgram_negative_sampling_text8_sgd_train_fp32_one_stream_b4096": (
            1386.3,
            1403.5,
            1401.7,
        ),
        # −0.6 / −0.6 %
        "xlstm_mlstm_block_recurrent_matrix_memory_loop_32steps_bf16_one_stream_b16": (
            7426.2,
            7380.1,
            7380.7,
        ),
    },
    "h100_holdout66_rerun": {
        # +5.1 / +5.1 %
        "byol_resnet18_online_beside_target_cifar_views_fp16_2streams_b128": (
            2676.6,
            2812.0,
            2812.6,
        ),
        # +2.6 / +2.6 % (this and TFT and xLSTM below: a second lease, 09:46-09:48 UTC)
        "diffwave_ljspeech_30_residual_layers_denoise_step_fp16_one_stream_b4": (
            7237.8,
            7428.2,
            7426.3,
        ),
        # −3.1 / −3.1 %
        "mixtral_8x7b_proportions_top2_of_8_experts_decode_step_bf16_one_stream_b8": (
            1704.8,
            1651.9,
            1651.3,
        ),
        # +3.0 / +3.0 %
        "nafnet_width32_sidd_denoise_simplegate_sca_fp16_channels_last_one_stream_b4": (
            4256.2,
            4384.1,
            4384.5,
        ),
        # −0.2 / −0.2 %
        "retinanet_r50_fpn_heads_topk_decode_coco_fp16_one_stream_b2": (2804.5, 2798.3, 2799.2),
        # −0.8 / −0.7 %
        "temporal_fusion_transformer_electricity_vsn_grn_lstm_attention_fp32_one_stream_b64": (
            2603.2,
            2582.5,
            2584.2,
        ),
        # +1.4 / +1.3 %
        "word2vec_skipgram_negative_sampling_text8_sgd_train_fp32_one_stream_b4096": (
            1383.0,
            1402.3,
            1400.5,
        ),
        # −1.1 / −1.1 %
        "xlstm_mlstm_block_recurrent_matrix_memory_loop_32steps_bf16_one_stream_b16": (
            7464.3,
            7380.8,
            7379.3,
        ),
    },
}


def test_the_blind_h100_holdout66() -> None:
    """Blind (eight everyday families written at edf1a7f and committed at 2254863 before any
    ran on a GPU, the model frozen at 81660f5; recorded on one H100 lease on 2026-12-07,
    07:40-07:50 UTC, after an H200 was asked for; five of them recorded again on the same
    lease, the other three on a second H100 lease at 09:46-09:48 UTC, the model still
    frozen): a Mixtral-style top-2-of-8 MoE decode step (bf16), RetinaNet's head stage with
    per-level top-1000 and box decoding (fp16, channels-last), NAFNet of width 32 (fp16,
    channels-last), one DiffWave reverse step (fp16), the Temporal Fusion Transformer with
    cuDNN LSTMs (fp32), two xLSTM mLSTM blocks in recurrent form for 32 steps (bf16), a
    word2vec skip-gram training step with foreach SGD (fp32) on one stream; BYOL's online
    ResNet-18 beside its target on two side streams (fp16). From the trace alone all 16
    within ±10 % (median |error| 1.9 %, worst BYOL's rerun +5.1 %), all 16 inside their
    range, 13 of 16 savings within 15 points (TFT's rerun +14.5). The three misses are the
    first recording's eager times: BYOL's fresh timing process measured its eager p50 at
    5,724 µs (±24 %) against the rerun's 3,796 (−25.1 points there, −5 on the rerun);
    NAFNet's profiled process ran its host ops a median 19.5 µs against the rerun's 10.8
    (the eager time from the trace +43 % there, −9 % on the rerun; +18.4 points) and
    RetinaNet's read its eager time 37 % long (+6 % on the rerun; +17.0 points). DiffWave
    reads compute-bound where replay saved 13 % (on both recordings), in the band between
    the verdicts; every other step launch-bound as replay saved 29-76 %."""
    from conftest import step_read, step_verdicts_agreeing_with_replay

    rows = _pair_rows("h100_holdout66")
    assert_summary(list(rows.values()), 16, 16, 0.0195, 16)
    assert max(abs(r.error_frac) for r in rows.values()) == pytest.approx(0.0508, abs=0.001)
    byol = "byol_resnet18_online_beside_target_cifar_views_fp16_2streams_b128"
    nafnet = "nafnet_width32_sidd_denoise_simplegate_sca_fp16_channels_last_one_stream_b4"
    retinanet = "retinanet_r50_fpn_heads_topk_decode_coco_fp16_one_stream_b2"
    misses = {k: round(r.saving_error_points, 1) for k, r in rows.items()}
    assert {k: v for k, v in misses.items() if abs(v) > 15} == {
        ("h100_holdout66", byol): -25.1,
        ("h100_holdout66", nafnet): 18.4,
        ("h100_holdout66", retinanet): 17.0,
    }
    assert rows["h100_holdout66", nafnet].eager_error_frac == pytest.approx(0.43, abs=0.01)
    assert rows["h100_holdout66_rerun", nafnet].eager_error_frac == pytest.approx(-0.09, abs=0.01)
    diffwave = "diffwave_ljspeech_30_residual_layers_denoise_step_fp16_one_stream_b4"
    first = validation_workloads(VALIDATION_DIR / "h100_holdout66")
    rest = [w for w in first if w.name != diffwave]
    assert step_verdicts_agreeing_with_replay(rest) == {"launch-bound": 7}
    rerun = validation_workloads(VALIDATION_DIR / "h100_holdout66_rerun")
    rest = [w for w in rerun if w.name != diffwave]
    assert step_verdicts_agreeing_with_replay(rest) == {"launch-bound": 7}
    # (in the band between the verdicts: read once each, here)
    for recording, predicted_saving in ((first, 0.01), (rerun, 0.02)):
        (w,) = [w for w in recording if w.name == diffwave]
        verdict, predicted = step_read(w)
        assert (verdict, round(predicted or 0.0, 2), round(w.saving, 2)) == (
            "compute-bound",
            predicted_saving,
            0.13,
        )


#: Every H100 recording's pins (the sets above), by recording.
ALL_EXPECTED: dict[str, dict[str, tuple[float, float, float]]] = {
    **EXPECTED,
    **EXPECTED_45,
    **EXPECTED_46,
    **EXPECTED_49,
    **EXPECTED_50,
    **EXPECTED_51,
    **EXPECTED_52,
    **EXPECTED_53,
    **EXPECTED_54,
    **EXPECTED_55,
    **EXPECTED_56,
    **EXPECTED_57,
    **EXPECTED_58,
    **EXPECTED_59,
    **EXPECTED_60,
    **EXPECTED_61,
    **EXPECTED_62,
    **EXPECTED_65,
    **EXPECTED_66,
}


@pytest.mark.parametrize(
    ("recording", "name"),
    [(s, n) for s, by_name in ALL_EXPECTED.items() for n in sorted(by_name)],
)
def test_h100_prediction(recording: str, name: str) -> None:
    assert_probe_prediction(recording, name, ALL_EXPECTED[recording][name])
