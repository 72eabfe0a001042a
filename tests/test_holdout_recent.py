"""The H200 sets recorded with the multi-stream replay model, timed in a fresh process and
checked with the built-in model (``bench/validation_table.py --sets SET``).

* ``streams_fit``: the concurrency fit set (``streams_workloads/``, record_streams.sh): GEMM
  chains latency- and throughput-bound on 2 and 4 side streams, memory-bound elementwise
  chains, two conv towers, a big GEMM beside many tiny kernels, and the earlier sets'
  multi-stream workloads recorded again, all forked with ``wait_stream`` and joined back.
  The schedule (nodes start when ready and when the device has room) and the per-node
  constants were fitted on it: not a hold-out. Within ±10 % on 9 of 10; its miss was the
  two conv towers (+11.8 %), and is now the four-stream event graph (+10.7 % since matrix
  kernels side by side slow each other; the conv towers +9.3 %). The big GEMM beside tiny
  kernels was −32.9 % until light kernels beside matrix kernels were made to advance more
  slowly (``LIGHT_SLOWDOWN``, measured on this set's replays): −8.7 %.
* ``holdout6``: eight new families (T5 cross-attention, a Conformer block, a diffusion
  sampler loop, PointNet, ResNeXt blocks, greedy draft decoding, WaveNet, top-1 experts on
  three streams), recorded once the multi-stream schedule was frozen (with 200 ns per
  node); ``holdout6_rerun``: the same machine three minutes later. At that freeze both read
  high on the graphs of many short nodes (6 of 8 within ±10 % on each); the per-node extra
  (100 ns) and the copy transition (2 µs) were then fitted on the 64 fresh-process replays,
  these 16 among them, so they are no longer held out: 8 of 8 on each now.
* ``holdout7``: eight more families (a VAE decoder, Perceiver IO, a cuDNN bidirectional LSTM
  tagger, chunked prefill into a static KV cache, GraphSAGE, a DINO head, SSD detection
  heads, capturable AMSGrad over 60 tensors), recorded once the 100 ns / 2 µs constants
  were frozen and never fitted on. GraphSAGE has no timing rows (its profile run stopped on
  the step-detection bug fixed since), so the set evaluates 7. At the freeze its one miss
  was the LSTM (−45.9 %: cuDNN re-records the same two events before each layer, and a wait
  was tied to the first record of its event id, reading the second layer as independent of
  the first); a wait now depends on the thread's last record before it, found on this set,
  so that row is no longer blind: −0.2 %, and +2.6 % since light kernels slow beside
  matrix kernels (its two directions run on two streams). 7 of 7 within ±10 %, median
  |error| 1.9 %.
* ``holdout8``: five more (RoPE with grouped-query attention, twelve inputs into an MLP, a
  LayerNorm/softmax chain, weights dequantized on a side stream joined by events, residual
  VQ) and holdout7's GraphSAGE again, recorded with the final model and never fitted on.
  GraphSAGE's replay differed from eager beyond tolerance (bf16 atomics in ``index_add_``),
  so the set evaluates 5: 4 within ±10 %, median |error| 3.7 %; the miss is the side-stream
  dequantization, a 43 µs graph, +13.0 %. Twelve inputs of 6.6 MB made replay 54 % *slower*
  than eager (the graph must copy them in; the eager step reads them in place): predicted
  with the copies known at +5 % saving, 59 points off, as its eager time from the trace is
  51 % high; from the trace alone (one small copy assumed) the step reads launch-bound.
* ``holdout9``: eight more (a selective-scan loop, residual VQ, RoPE attention, a small UNet,
  weights dequantized on a side stream, a step fed twelve inputs, a LayerNorm/softmax chain,
  a tabular transformer), written apart from ``holdout8`` and recorded with the final model,
  never fitted on: 7 of 8 within ±10 %, median |error| 2.8 %. The miss is again the
  twelve-input step (8 MiB of inputs): −24.7 %, the input copies under-charged.
* ``holdout10``: eight more (expert-choice MoE with its shared expert on a side stream, a
  GRUCell loop, KV-cache decode, ResNet BasicBlocks, a nine-input recommender, a causal SDPA
  encoder, an EMA update on a side stream beside GEMMs, LAMB over 60 tensors), recorded
  once light kernels beside matrix kernels were slowed (``LIGHT_SLOWDOWN``) and never
  fitted on: 7 of 8 within ±10 %, median |error| 6.3 %. The miss is the MoE's side stream,
  −12.8 %. Its eager times from the traces are the worst of any set (median |error| 44 %:
  the recommender +148 %), so two savings read 11-23 points high. ``holdout10_rerun``: the
  same eight on a fresh machine lease nine minutes later, with the same model: 6 of 8 within
  ±10 %, median |error| 3.0 %. The recommender replayed 17 % slower there (189.7 µs against
  162.6; predicted 152.5 and 152.4), −19.7 %, and the MoE read −11.1 %. Its eager times from
  the traces came out nearer the measured ones (median |error| 20 %): where the unprofiled
  eager time agreed on both leases, the first lease's traces gave up to 2.2x the second's.
* ``holdout11``: eight more (deformable sampling with ``grid_sample``, a beam-search step, a
  cross-entropy training step with SGD momentum, FNO spectral convolutions, block-sparse
  masked SDPA, timestep-conditioned GroupNorm ResBlocks, an all-gather simulated by copies on
  a side stream, quantile/sort statistics), recorded once the ``mixed`` verdict rule was in
  and never fitted on: 8 of 8 within ±10 %, median |error| 3.0 %. Its eager times from the
  traces read high again (median |error| 43 %), so three savings read 24-26 points high.
* ``holdout12``: eight more (CapsNet dynamic routing, a graph attention layer with an edge
  softmax, a NeRF MLP, a QuartzNet speech encoder with greedy CTC, a SimCLR projection head
  and InfoNCE loss, sliding-window attention, Transformer-XL relative-position attention, a
  GEMM chain beside a LayerNorm chain on a side stream), recorded before the profiler's cost
  per operator went from 8 to 30 µs (with the 40 % floor) and the ``mixed`` rule from 25 to
  20 %, with the replay model unchanged since ``holdout11``: 8 of 8 within ±10 %, median
  |error| 2.1 %, every measured time inside its range, every saving within 15 points; its
  eager times from the traces median |error| 7 % with either profiler cost.
* ``holdout13``: eight more (a Kalman filter over 16 frames, a neural ODE with RK4, DeepFM
  with its deep and FM parts on two side streams, a Gumbel-softmax VAE, a Set Transformer, a
  TCN, a YOLO head decode, Hyena FFT convolutions), recorded once the current model was
  frozen (30 µs per operator, the 20 % ``mixed`` rule) and never fitted on: 7 of 8 within
  ±10 %, median |error| 5.3 %, all inside their ranges; eager median |error| 15 % (33 % with
  8 µs per operator), two savings beyond 15 points. ``holdout13_rerun``: the same eight on a
  fresh lease six minutes later: 6 of 8, median 1.2 %, eager 5 %. The Kalman filter read
  +12.2 % and +11.2 % (its 64 copy-to-kernel hand-offs charged 2 µs each), the
  Gumbel-softmax VAE −9.3 % and −13.3 %. Since then a device-to-device copy node is charged
  no hand-off (in the profiled replays of every set, the kernel after one starts 0.26-0.42
  µs later, as after a kernel; 2-6 µs after a memset node): the Kalman filter reads +3.9 %
  and +3.1 %, so these two rows are no longer blind (8 of 8 and 7 of 8).
* ``holdout14``: eight more (ConvNeXt blocks, a RealNVP flow, log-domain Sinkhorn
  iterations, a RAFT correlation lookup with ``grid_sample`` and a ConvGRU, an int8 MLP
  through ``torch._int_mm``, top-p sampling, Inception modules with four branches on four
  streams, a ``torch.compile``'d GPT-2 block), recorded once that copy-node rule was in and
  never fitted on: 7 of 8 within ±10 %, median |error| 5.4 %; ``holdout14_rerun``: seven of
  them (not the compiled block, whose compiles took 218 of the first lease's 406 s) on a
  fresh lease: 6 of 7, median 2.9 %. The miss on both is the Inception modules, +15.1 % and
  +16.2 % at the freeze: the second module's forks were read as waits on the branch
  launched before (a stream's first wait counted as a fork only before its first launch);
  read as forks, +10.7 % and +11.7 %. What remains is the schedule letting nothing run
  beside a kernel that fills the device (its 41-57 µs max-pools), where the replay started
  the next branch's kernel in a max-pool's last wave; since a kernel of several waves makes
  room in its last one (``Packing.releases``, from this set's and holdout20's replays: not
  blind since), +8.7 % and +9.6 %. Eager p50s moved between the two leases by up
  to 1.8x (nucleus sampling 560 and 313 µs, ConvNeXt 992 and 625) while the graphed ones
  held within 8 %.
* ``holdout15``: eight more (a Siamese encoder whose towers are forked onto side streams and
  joined at each of three layers, a decode step writing a ring-buffer KV cache, histograms
  by ``scatter_add_``, a PPO update with capturable Adam, DCN-v2 with its deep MLP on a side
  stream, a Haar wavelet transform, LoRA adapters, a two-stage micro-batch pipeline),
  recorded once the fork rule was in, never fitted on: 6 of 8 within ±10 %, median |error|
  7.1 %; ``holdout15_rerun``, the same eight on a fresh lease: 4 of 8, 10.4 %. Every row
  but LoRA's reads low. DCN-v2 −26.2 % and −30.8 %: a cross-layer GEMM of 15 µs alone ran
  20-47 µs beside the deep MLP's GEMMs on the other stream, and the schedule slows no
  matrix kernel beside another. The Siamese towers −25.8 % and −25.7 %: the second and
  third layers' towers do run side by side in the replay, as the fork rule reads them, but
  the first layer's second tower starts 26-33 µs late in every profiled replay; with the
  rule before it (those forks read as waits on the tower before) −8.9 % and −8.7 %. The
  pipeline, the histograms and the KV decode read −9 to −13 % on the rerun's lease, whose
  replays ran up to 14 % slower than the first's. Timed apart, the small graphs' input copies
  added 10-28 µs to a step where the model added 2-7.5 µs: the replay after the copies pays
  its whole latency (``copy_cost.json``), which the model now charges (6 of 8 on both leases:
  DCN-v2 −23.7 / −28.4 %, the Siamese towers −21.5 / −21.3 %).
* ``holdout16``: eight more (a CLIP scorer with its towers on two side streams, a fusion MLP
  fed six small inputs, an RWKV time-mix loop, an STFT mel front end, MBConv blocks at batch
  1, top-k retrieval, Wide & Deep fed four inputs with a side stream, a Lion update fed its
  60 gradients), written and committed before the copy-latency change was judged on them,
  recorded with it, never fitted on: 6 of 8 within ±10 %, median |error| 5.9 %;
  ``holdout16_rerun`` (a fresh process on the same lease): 7 of 8, 7.9 %. With the model
  before the change the sixteen read 9 of 16. The misses are the steps fed many small
  inputs (Wide & Deep −24.5 / −23.8 %, the six-input fusion −27.3 % on the first): each
  copy's host time on a later lease took 7.4-10.8 µs against the calibrated 5.6 µs. Replay
  made the Lion update 34-35 % slower than eager (45 MB of gradients copied in); its
  saving reads 84 and 44 points high.

The eager errors and savings quoted per set above are those of the model each set was
recorded with; the pinned values below are the current model's.
"""

from __future__ import annotations

import gzip
import json
import statistics
import sys
from dataclasses import replace

import pytest
from conftest import (
    ROOT,
    SAMPLES,
    assert_row_classified,
    assert_row_matches,
    step_verdicts_agreeing_with_replay,
)

sys.path.insert(0, str(ROOT / "bench"))

from validation_table import (  # noqa: E402
    ValidationRow,
    evaluate,
    prepare,
    validate_folder,
    validation_workloads,
)

from traceinspect.calibration import calibration_for  # noqa: E402

VALIDATION = SAMPLES / "validation"

# set -> workload -> (measured graphed p50 µs, predicted µs, measured saving, predicted saving)
EXPECTED: dict[str, dict[str, tuple[float, float, float, float]]] = {
    "streams_fit": {
        # two 1024x4096 @ 4096x4096 GEMMs on one side stream beside 40 small elementwise
        # ops on the other: the small ones fit in the slots the GEMMs leave, but advance
        # at 1 / (1 + 1.3 * 0.97) of their pace beside them (−32.9 % before that)
        "big_and_small": (186.2, 178.0, 0.7704, 0.8030),  # −4.4 %
        # two conv towers: the replay ran them closer together than the schedule does
        # (140.9 µs, under the range 147.9-181.6); +7.5 % before light kernels started on
        # partial room
        "conv_towers": (140.9, 159.6, 0.8393, 0.7272),  # +13.3 %
        "dual_tower_streams_b4": (158.5, 153.2, 0.8633, 0.7688),  # −3.3 %
        # memory-bound chains side by side: within ±10 %, yet measured under the range
        # (181.4 µs against 187.1-213.2)
        "elementwise_chains": (181.4, 178.1, 0.736, 0.7557),  # −1.8 %
        "fork_join_streams": (105.3, 99.5, 0.5887, 0.6443),  # −5.5 %
        # 674.0 µs (−0.1 %) while a timing coincidence beside the trace's waits chained the two
        # streams' GEMMs in the replay
        # (saving predicted 0.0964 before the simulated eager run shared the device: its two
        # GEMM streams then overlapped at their traced pace)
        "gemm_large_2s": (674.6, 660.5, 0.0753, 0.1302),  # compute-bound: −2.1 %
        "gemm_small_2s": (76.0, 80.4, 0.8386, 0.8804),  # +5.8 %
        "gemm_small_4s": (84.7, 89.3, 0.872, 0.8579),  # +5.4 %
        "multistream_events": (87.8, 98.4, 0.8252, 0.8328),  # +12.0 %
        "streams_pipeline": (127.8, 118.4, 0.753, 0.7550),  # −7.4 %
    },
    "holdout6": {
        "conformer_block_b2": (102.9, 114.7, 0.8091, 0.8530),  # +11.5 %
        "diffusion_sampler_b4": (281.0, 303.2, 0.8271, 0.8164),  # +7.9 %
        "draft_decode_b1": (648.8, 689.2, 0.8302, 0.8217),  # +6.2 %
        "moe_streams_b8": (141.6, 149.6, 0.8117, 0.8024),  # three streams: +4.7 %
        "pointnet_b16": (226.7, 228.9, 0.4712, 0.4880),  # +1.0 %
        "resnext_block_b8": (168.0, 178.9, 0.7353, 0.7325),  # +6.5 %
        "t5_cross_attn_b4": (240.5, 257.7, 0.8114, 0.7976),  # +7.2 %
        "wavenet_b4": (642.1, 684.6, 0.6046, 0.6209),  # +6.6 %
    },
    "holdout6_rerun": {
        "conformer_block_b2": (102.3, 114.7, 0.7973, 0.8634),  # +12.1 %
        "diffusion_sampler_b4": (285.6, 303.5, 0.8468, 0.8161),  # +6.3 %
        "draft_decode_b1": (649.7, 690.0, 0.8417, 0.8274),  # +6.2 %
        "moe_streams_b8": (139.9, 147.9, 0.7918, 0.7937),  # three streams: +4.8 %
        "pointnet_b16": (226.0, 228.3, 0.4323, 0.4504),  # +1.0 %
        "resnext_block_b8": (170.9, 179.7, 0.7594, 0.7794),  # +5.1 %
        "t5_cross_attn_b4": (240.6, 253.6, 0.8130, 0.7744),  # +5.4 %
        "wavenet_b4": (643.7, 683.9, 0.6071, 0.5882),  # +6.2 %
    },
    "holdout7": {
        "adam_amsgrad_loop": (2149.1, 2094.8, 0.8126, 0.8250),  # −2.5 %
        # cuDNN's LSTM re-records two events before each layer (−45.9 % when a wait was
        # tied to the first record of its event id)
        # +4.9 % while timing coincidences chained the LSTM's two directions, +1.1 % while a
        # wait held back the thread's next kernel on any stream
        "bilstm_tagger_b16": (566.3, 617.4, 0.854, 0.8277),  # +9.0 %
        "dino_head_b32": (71.7, 76.6, 0.7276, 0.7055),  # +6.8 %
        "kv_cache_prefill_chunks_b2": (746.0, 796.7, 0.8101, 0.8052),  # +6.8 %
        "perceiver_io_b4": (161.2, 161.9, 0.7569, 0.8299),  # +0.4 %
        "ssd_heads_b4": (392.9, 402.3, 0.6011, 0.6112),  # +2.4 %
        "vae_decoder_b2": (347.7, 353.4, 0.7801, 0.7945),  # +1.7 %
    },
    "holdout8": {
        # weights dequantized on a side stream, joined per layer by an event: a 43 µs graph
        # (+16.4 % before light kernels started on partial room)
        "dequant_prefetch_b16": (43.0, 44.3, 0.7956, 0.8145),  # +3.1 %
        # twelve inputs (6.6 MB) copied in before every replay: slower than eager
        "input_heavy_b32": (145.0, 172.3, -0.5413, -0.3026),  # +18.8 %
        "norm_softmax_chain_b64": (203.7, 208.7, 0.7421, 0.7996),  # +2.5 %
        "residual_vq_b8": (213.3, 210.9, 0.5520, 0.5871),  # −1.1 %
        "rope_gqa_attention_b4": (197.3, 211.4, 0.7537, 0.8214),  # +7.1 %
    },
    "holdout9": {
        # twelve inputs (8 MiB) copied in before every replay: the copies under-charged
        "input_heavy_b32": (233.2, 218.0, 0.5402, 0.5138),  # −6.5 %
        "layernorm_softmax_chain_b64": (208.6, 214.7, 0.7082, 0.7068),  # +2.9 %
        "mamba_scan_b2": (329.9, 350.9, 0.8450, 0.8806),  # +6.3 %
        "rope_attention_b4": (296.6, 310.7, 0.8020, 0.8461),  # +4.7 %
        # its eager time from the trace is high: the saving reads 18.5 points high
        "tabular_transformer_b256": (365.1, 372.8, 0.5887, 0.7264),  # +2.1 %
        "two_stream_prefetch_b16": (68.5, 60.7, 0.8694, 0.8375),  # two streams: −14.2 %
        "unet_down_up_b1": (298.1, 313.6, 0.7535, 0.7364),  # +5.2 %
        "vq_codebook_b8": (290.6, 297.0, 0.5989, 0.6585),  # +2.2 %
    },
    "holdout10": {
        "causal_sdpa_encoder_b2": (340.0, 326.5, 0.8259, 0.7838),  # −4.0 %
        # 48 EMA kernels on a side stream beside eight GEMMs: measured under the range (736.4
        # µs against 759.1-863.2) until the GEMMs' two-wave neighbours made room in their
        # last wave; −2.3 % before light kernels streaming memory shared its bandwidth
        "ema_side_stream_b32": (736.4, 757.7, 0.373, 0.2621),  # +2.9 %
        # the shared expert on a side stream beside the routed experts' batched GEMMs: every
        # profiled replay ran the routing only after the shared expert's four kernels (from
        # 41 µs on), where the schedule lets it slip into the last waves of the expert's
        # two-wave elementwise kernels
        # −10.4 % (−9.9 % before light kernels started on partial room, −13.5 % before a
        # graph's start nodes ran in capture order)
        "expert_choice_moe_b16": (168.0, 151.8, 0.7263, 0.7622),
        "gru_cell_loop_b32": (581.8, 589.4, 0.7906, 0.6593),  # +1.3 %
        "kv_decode_b4": (327.2, 318.0, 0.8414, 0.8591),  # −2.8 %
        "lamb_update_b1": (2627.1, 2565.0, 0.7841, 0.7724),  # −2.4 %
        # its eager time from the trace is 148 % high: the saving reads 22.8 points high
        "recsys_embed_mlp_b512": (162.6, 189.3, 0.6339, 0.7349),  # +16.4 %
        "resnet_basic_b16": (502.9, 505.8, 0.7557, 0.8133),  # +0.6 %
    },
    "holdout10_rerun": {
        "causal_sdpa_encoder_b2": (324.1, 326.9, 0.7052, 0.7842),  # +0.9 %
        "ema_side_stream_b32": (753.7, 739.3, 0.4339, 0.446),  # −1.9 % (−6.9 % before)
        "expert_choice_moe_b16": (164.4, 151.3, 0.7331, 0.7869),  # −8.0 % (−11.8 % before)
        "gru_cell_loop_b32": (569.1, 590.5, 0.7313, 0.7353),  # +3.8 %
        "kv_decode_b4": (325.9, 317.3, 0.8398, 0.8341),  # −2.6 %
        "lamb_update_b1": (2601.3, 2568.3, 0.7752, 0.7958),  # −1.3 %
        # 162.6 µs on the first lease: measured above the range (136.7-189.4) here
        "recsys_embed_mlp_b512": (189.7, 189.2, 0.7009, 0.7249),  # −0.3 %
        "resnet_basic_b16": (503.2, 501.5, 0.7476, 0.6998),  # −0.3 %
    },
    "holdout11": {
        "beam_search_step_b8": (577.4, 568.7, 0.7500, 0.7185),  # −1.5 %
        "cross_entropy_train_b64": (661.4, 660.4, 0.7160, 0.7181),  # −0.2 %
        # eager from the trace +89 %: the saving reads 21.5 points high
        "deformable_offsets_b4": (394.3, 410.8, 0.5301, 0.6819),  # +4.2 %
        # eager from the trace +79 %: the saving reads 18.9 points high
        "group_norm_unet_block_b4": (749.8, 780.5, 0.5592, 0.6507),  # +4.1 %
        "quantile_loss_ops_b256": (454.6, 480.7, 0.7742, 0.8368),  # +5.7 %
        "sparse_attention_mask_b2": (388.8, 375.7, 0.7755, 0.7477),  # −3.4 %
        "spectral_conv_b8": (537.4, 548.5, 0.6469, 0.7349),  # +2.1 %
        # 8 x 8 MiB copies on a side stream beside six GEMM layers; eager from the trace +34 %:
        # the saving reads 21.7 points high
        "two_stream_allgather_sim_b16": (602.9, 574.2, 0.2556, 0.3516),  # −4.8 %
    },
    "holdout12": {
        "capsule_routing_b64": (1229.4, 1234.7, 0.2629, 0.0686),  # +0.4 %
        # replay saved 6 %: compute-bound
        "gat_edge_softmax_b1": (2962.6, 2957.7, 0.0647, -0.0034),  # −0.2 %
        "nerf_mlp_b4096": (1692.5, 1688.9, 0.1648, 0.1183),  # −0.2 %
        "quartznet_ctc_b4": (1453.3, 1493.3, 0.6790, 0.7244),  # +2.8 %
        "simclr_infonce_b256": (167.3, 167.3, 0.6982, 0.7287),  # +0.0 %
        # replay saved 8 %: compute-bound
        "sliding_window_attn_b2": (2692.9, 2749.9, 0.0774, -0.0069),  # +2.1 %
        "transformer_xl_relpos_b2": (1191.4, 1220.0, 0.6240, 0.5608),  # +2.4 %
        "two_stream_norm_chain_b32": (314.7, 322.8, 0.6092, 0.7113),  # +2.6 %
    },
    "holdout13": {
        "deepfm_streams_b2048": (139.0, 138.1, 0.8638, 0.8383),  # −0.6 %
        "gumbel_softmax_vae_b256": (117.5, 118.2, 0.8746, 0.8599),  # +0.5 %
        "hyena_fftconv_b8": (3712.8, 3777.4, 0.0365, -0.0086),  # +1.7 %
        # 537 small nodes, 64 of them DtoD copies: +12.2 % while each was charged a 2 µs
        # hand-off to the kernel after it (0.29 µs in its profiled replay, as after a kernel)
        "kalman_filter_b1024": (1304.7, 1366.3, 0.8371, 0.8390),  # +4.7 %
        "neural_ode_rk4_b512": (2058.0, 2096.1, 0.8381, 0.7221),  # +1.9 %
        # eager measured 2,303 µs, from the trace 1,209 (−48 %): the host stretches between
        # its cuDNN attention calls are its own work, not the profiler's; reads mixed
        "set_transformer_b64": (1129.9, 1070.5, 0.5093, 0.1208),  # −5.3 %
        # eager measured 1,498 µs (2,665 on the rerun's lease), from the trace 2,708
        "tcn_b32": (1075.3, 1131.7, 0.2823, 0.5592),  # +5.2 %
        "yolo_head_decode_b16": (1293.6, 1322.8, 0.0679, 0.0027),  # +2.3 %
    },
    "holdout13_rerun": {
        "deepfm_streams_b2048": (142.3, 138.3, 0.8561, 0.8150),  # −2.8 %
        "gumbel_softmax_vae_b256": (123.0, 118.3, 0.8907, 0.8615),  # −3.9 %
        "hyena_fftconv_b8": (3750.1, 3774.0, 0.0512, -0.0081),  # +0.6 %
        "kalman_filter_b1024": (1315.2, 1370.9, 0.8965, 0.8797),  # +4.2 %
        "neural_ode_rk4_b512": (2062.6, 2097.2, 0.8338, 0.8140),  # +1.7 %
        "set_transformer_b64": (1065.3, 1070.8, 0.5683, 0.3149),  # +0.5 %
        "tcn_b32": (1126.4, 1133.5, 0.5774, 0.5593),  # +0.6 %
        # replay saved 6 %; predicted 14 % (eager from the trace +9 %): reads mixed
        "yolo_head_decode_b16": (1299.7, 1320.7, 0.0613, 0.0581),  # +1.6 %
    },
    "holdout14": {
        "compiled_gpt_block_b4": (74.2, 76.9, 0.7688, 0.8026),  # Triton kernels: +3.6 %
        # eager measured 992 µs here, 625 on the rerun's lease (from the trace 604 and 598):
        # replay saved 35 % here, 5 % there; reads compute-bound
        "convnext_block_b8": (641.8, 602.8, 0.3532, 0.0032),  # −6.1 %
        # four branches on four streams around a 41-57 µs max-pool that fills the device:
        # the replay overlapped the other branches more than the schedule lets them (+15.1 %
        # while the second module's forks were read as waits on the branch before)
        # +15.6 % until a kernel of several waves made room in its last one
        "inception_streams_b16": (280.4, 305.8, 0.739, 0.7897),  # +9.1 %
        "int8_mm_dequant_b64": (235.1, 247.6, 0.8194, 0.8385),  # +5.3 %
        "nucleus_sampling_b16": (293.3, 290.1, 0.4767, 0.4446),  # −1.1 %
        "raft_corr_update_b2": (1439.8, 1482.5, 0.6262, 0.6429),  # +3.0 %
        "realnvp_flow_b512": (385.5, 400.3, 0.851, 0.8344),  # +3.8 %
        "sinkhorn_ot_b8": (1517.7, 1612.0, 0.7644, 0.7778),  # +6.2 %
    },
    "holdout14_rerun": {
        "convnext_block_b8": (591.7, 598.9, 0.0529, 0.0008),  # +1.2 %
        "inception_streams_b16": (276.5, 301.4, 0.669, 0.6215),  # +9.0 %
        "int8_mm_dequant_b64": (229.8, 246.6, 0.6818, 0.7101),  # +7.3 %
        # eager measured 313 µs here, 560 on the first lease (from the trace 393 and 619)
        "nucleus_sampling_b16": (276.7, 286.8, 0.1146, 0.1996),  # +3.7 %
        "raft_corr_update_b2": (1434.0, 1476.3, 0.6307, 0.6036),  # +2.9 %
        "realnvp_flow_b512": (383.9, 399.9, 0.8053, 0.7747),  # +4.2 %
        "sinkhorn_ot_b8": (1537.5, 1615.2, 0.7513, 0.7337),  # +5.1 %
    },
    "holdout16": {
        # recorded once the replay latency was no longer hidden behind the input copies, never
        # fitted on; the misses are the two steps fed four and six small inputs
        "clip_two_tower_streams_b64": (87.3, 94.3, 0.8153, 0.8738),  # +8.0 %
        "feature_fusion_6in_b32": (103.7, 85.8, 0.7629, 0.7172),  # −17.3 %
        "lion_foreach_update": (700.9, 856.3, -0.3382, 0.1866),  # +22.2 %
        "mbconv_se_b1": (209.9, 224.5, 0.8162, 0.7968),  # +7.0 %
        "retrieval_topk_b16": (135.1, 130.6, 0.6895, 0.6870),  # −3.3 %
        "rwkv_timemix_loop_b4": (1901.8, 1917.9, 0.8695, 0.8799),  # +0.8 %
        "stft_melspec_b8": (57.0, 58.4, 0.7885, 0.8106),  # +2.5 %
        "wide_deep_4in_streams_b256": (84.7, 80.8, 0.8615, 0.8124),  # −4.7 %
    },
    "holdout16_rerun": {
        "clip_two_tower_streams_b64": (90.5, 94.4, 0.8379, 0.8813),  # +4.3 %
        "feature_fusion_6in_b32": (81.8, 85.3, 0.7051, 0.6656),  # +4.3 %
        "lion_foreach_update": (694.7, 745.5, -0.3536, -0.0331),  # +7.3 %
        "mbconv_se_b1": (215.6, 224.5, 0.8558, 0.8100),  # +4.1 %
        "retrieval_topk_b16": (138.8, 131.3, 0.7282, 0.7633),  # −5.4 %
        "rwkv_timemix_loop_b4": (1857.8, 1916.7, 0.8235, 0.8143),  # +3.2 %
        "stft_melspec_b8": (61.1, 57.4, 0.8499, 0.7666),  # −6.1 %
        "wide_deep_4in_streams_b256": (84.0, 80.8, 0.816, 0.8227),  # −3.8 %
    },
    "holdout15": {
        # cross layers beside the deep MLP on a side stream: a 15 µs GEMM alone ran 20-47 µs
        # beside the other stream's GEMMs; the schedule slows two side by side 1.45x each
        # (−3.3 and −9.2 % while it slowed no matrix kernel beside another)
        "dcn_v2_streams_b1024": (156.3, 158.8, 0.7142, 0.7371),  # +1.6 %
        "haar_wavelet_b8": (209.6, 200.0, 0.8634, 0.8644),  # −4.6 %
        "kv_ring_buffer_decode_b8": (405.9, 380.9, 0.8921, 0.8599),  # −6.2 %
        "lora_mlp_b16": (509.2, 514.4, 0.382, 0.3659),  # +1.0 %
        "pipeline_microbatch_streams_b4": (86.8, 91.5, 0.8795, 0.9388),  # +5.4 %
        "ppo_update_b2048": (424.9, 430.0, 0.8686, 0.8606),  # +1.2 %
        "scatter_histogram_b64": (75.8, 77.3, 0.7178, 0.6532),  # +2.0 %
        # towers forked and joined at each of three layers: −8.9 % with the second and third
        # layers' forks read as waits on the tower launched before (the rule before holdout14)
        "siamese_streams_b32": (90.0, 81.6, 0.9357, 0.8908),  # −9.4 %
    },
    "holdout15_rerun": {
        "dcn_v2_streams_b1024": (166.5, 158.8, 0.8069, 0.7534),  # −4.6 %
        "haar_wavelet_b8": (202.3, 197.8, 0.8007, 0.8155),  # −2.2 %
        "kv_ring_buffer_decode_b8": (411.1, 383.1, 0.9111, 0.8587),  # −6.8 %
        "lora_mlp_b16": (510.0, 517.5, 0.4136, 0.5604),  # +1.5 %
        "pipeline_microbatch_streams_b4": (98.6, 91.2, 0.9272, 0.9052),  # −7.5 %
        "ppo_update_b2048": (444.2, 429.0, 0.9019, 0.8567),  # −3.4 %
        "scatter_histogram_b64": (79.1, 78.3, 0.7738, 0.7786),  # −1.1 %
        "siamese_streams_b32": (89.4, 82.6, 0.9382, 0.9076),  # −7.5 %
    },
}
#: Outside ±10 %: the expert-choice MoE was low (−11.8 to −13.5 %) since a kernel of several
#: waves makes room in its last wave, until a graph's start nodes ran in capture order
#: (schedule._roots: −8.0 and −9.9 %); the per-layer prefetch on a side stream (−14.1 %)
#: since a kernel of one wave makes room at 80 or 90 % of its run (the concurrency set's four small
#: multi-stream graphs, +15 to +17.5 % before, came within ±10 % with it);
#: steps fed many inputs high (holdout8's twelve inputs, the Lion update's 60 on the first
#: lease), the Siamese towers low. DCN-v2 is in since its GEMM packed onto the SMs the deep
#: network's left free runs slower (schedule.PACKED_EXPONENT): −18.8 and −23.8 % before.
#: Since each input copy is charged at the pace of the trace's host where that is faster
#: than the calibration's (eager.COPY_PER_LAUNCH_CALL: launch calls a median 5.7-5.9 µs
#: here, 7.2-7.3 µs per copy): holdout16_rerun's six-input fusion (+19.1 % before) and Lion
#: update (+23.3 %) are within, and holdout16's fusion reads −17.3 % (−6.0 % before): the
#: same script's copies cost its two processes 9.9 and 6.4 µs (``host_costs``), a spread no
#: trace shows. The concurrency set's four-stream event graph, +8.8 % while matrix kernels
#: side by side did not slow each other, read +10.7 % since they do and +8.0 % since the
#: copy follows its host's pace.
GRAPHED_MISSES = {
    # the concurrency set's conv towers and three GEMM branches joined by events read long
    # since a light kernel beside another stream's is charged LIGHT_BESIDE_NS (+4.6 and
    # +8.0 % before), where the Siamese towers of holdout15 and its rerun (−14.0, −11.9 %)
    # and holdout10's expert-choice MoE (−10.4 %) came within
    "streams_fit": {"conv_towers", "multistream_events"},  # +12.3, +12.0 %
    "holdout6": {"conformer_block_b2"},  # +11.5 %
    "holdout6_rerun": {"conformer_block_b2"},  # +12.1 %
    "holdout8": {"input_heavy_b32"},  # +18.8 %
    "holdout9": {"two_stream_prefetch_b16"},  # −11.4 %
    "holdout10": {"recsys_embed_mlp_b512"},  # +16.4 %
    "holdout16": {"feature_fusion_6in_b32", "lion_foreach_update"},  # −17.3, +22.2 %
}
#: Measured outside [low, high]: none. Until a kernel of one wave made room at 80 or 90 % of
#: its run, the concurrency set's conv towers (140.9 µs against 151.4-192.6), elementwise
#: chains (181.4 against 189.4-229.1) and two small GEMM graphs, whose replays ran their
#: streams closer together than the schedule had them, and Inception's, just under (280.4 µs
#: against 280.5-331.4), were below. The range charges each input copy 0.6-1.2 times the
#: built-in 9.2 µs (COPY_HOST_LOW_FACTOR, COPY_HOST_HIGH_FACTOR), which holds every step fed
#: many small inputs.
OUTSIDE_RANGE: dict[str, set[str]] = {}
#: Saving without --eager-us more than 15 points off: the twelve-input step of holdout8
#: (+23.9 points, +15.2 while its copy was charged 9.2 µs: replay lost 54 %, its eager
#: time from the trace 41 % high). Since the profiler's costs were refitted on all 553
#: fresh-process recordings (24 µs an operator, 1 µs a CUDA call, a 45 % floor), the top-p
#: sampling of holdout14_rerun reads within (+8.5 points; +15.5 before).
#: Since a profiled process whose host ran slow is brought to a typical one's pace
#: (eager.host_speed), holdout9's tabular Transformer (+18.5 points before), holdout10's
#: recommender (+16.7), holdout11's GroupNorm U-Net block and simulated all-gather and
#: holdout15_rerun's LoRA adapters (eager rounds spread ±39 %) read within 15 points; the
#: capsule routing reads −19.4 (−14.4 before: its launch calls took a median 7.9 µs, yet its
#: measured eager time was not shorter than the trace's).
SAVING_MISSES = {
    "holdout8": {"input_heavy_b32"},
    "holdout11": {"deformable_offsets_b4"},
    "holdout12": {"capsule_routing_b64"},
    "holdout13": {"set_transformer_b64", "tcn_b32"},
    "holdout13_rerun": {"set_transformer_b64"},
    "holdout14": {"convnext_block_b8"},  # eager 992 µs on this lease, 625 next
    # Lion fed its 60 gradients (45 MB): replay lost 34-35 %, as the graph copies them in;
    # its eager time from the traces reads 101 % and 41 % high (+52.5 points here, +32.0 on
    # the rerun, +13.5 there while its 60 copies were charged 9.2 µs each and the graphed
    # time read +23 %: two errors that cancelled)
    "holdout16": {"lion_foreach_update"},
    "holdout16_rerun": {"lion_foreach_update"},
}


@pytest.fixture(scope="module")
def rows() -> dict[str, dict[str, ValidationRow]]:
    return {name: validate_folder(VALIDATION / name) for name in EXPECTED}


def _cases() -> list[tuple[str, str]]:
    return [(s, w) for s, by_name in EXPECTED.items() for w in sorted(by_name)]


def test_every_recent_workload_is_checked(rows: dict[str, dict[str, ValidationRow]]) -> None:
    for name, expected in EXPECTED.items():
        assert set(rows[name]) == set(expected), name


def test_graph_sage_has_no_timing_and_is_left_out() -> None:
    # GIVEN holdout7's GraphSAGE recording, whose profile run stopped before timing
    folder = VALIDATION / "holdout7" / "graph_sage_b1"
    results = json.loads((folder / "results.json").read_text())
    # THEN it holds its traces but no timing row, and the set evaluates the other seven
    assert results["rows"] == []
    assert (folder / "step.b8000.eager.json.gz").is_file()
    assert "IndexError" in gzip.decompress((folder / "profile.log.gz").read_bytes()).decode()
    names = {w.name for w in validation_workloads(VALIDATION / "holdout7")}
    assert len(names) == 7 and "graph_sage_b1" not in names


@pytest.mark.parametrize(("recording", "name"), _cases())
def test_recent_set_prediction(
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
    [
        ("streams_fit", 8, 0.0552),
        ("holdout6", 7, 0.0654),
        ("holdout6_rerun", 7, 0.06),
        ("holdout7", 7, 0.0253),
        ("holdout8", 4, 0.0309),
        ("holdout9", 7, 0.0496),
        ("holdout10", 7, 0.0284),
        ("holdout10_rerun", 8, 0.0159),
        ("holdout11", 8, 0.0374),
        ("holdout12", 8, 0.0128),
        ("holdout13", 8, 0.0205),
        ("holdout13_rerun", 8, 0.0164),
        ("holdout14", 8, 0.0459),
        ("holdout14_rerun", 7, 0.0416),
        ("holdout15", 8, 0.0326),
        ("holdout15_rerun", 8, 0.0401),
        ("holdout16", 6, 0.058),
        ("holdout16_rerun", 8, 0.045),
    ],
)
def test_recent_set_summary(
    recording: str, within: int, median_error: float, rows: dict[str, dict[str, ValidationRow]]
) -> None:
    """Within ±10 % and median |error| per set: the concurrency set 9 of 10 (7.3 %) at its
    freeze, 8 of 10 (5.5 %) as the model stands; the sixth hold-out 8 of 8 on both machines
    (4.2 % and 3.7 %) at its freeze, the seventh 7 of 7 (2.3 %)."""
    errors = [abs(r.error_frac) for r in rows[recording].values()]
    assert sum(e <= 0.10 for e in errors) == within
    assert statistics.median(errors) == pytest.approx(median_error, abs=0.001)


def test_the_sixth_hold_out_read_high_with_the_constants_it_was_frozen_with() -> None:
    """With 200 ns per node, no copy transition and the calibration machine's 5.8 and 5.6 µs
    per input copy (the model holdout6 was recorded under, the schedule unchanged) both
    recordings of the set come within ±10 % on 6 of 8, median |error| 9.1 % and 8.1 %
    (6.5 % and 5.6 % while the input copies hid the replay's
    latency): the graphs of many short nodes read high (the diffusion sampler +13.3 % and
    +11.6 %, the draft decoder +10.8 % and +10.7 %). This machine's replays cost
    less per node than ``holdout2_fresh``'s; the refit on all 64 fresh-process replays
    (100 ns, 2 µs after a copy node) brought both to 8 of 8."""
    misses: dict[str, set[str]] = {}
    medians: dict[str, float] = {}
    for recording in ("holdout6", "holdout6_rerun"):
        errors: dict[str, float] = {}
        for w in validation_workloads(VALIDATION / recording):
            prepared = prepare(w)
            frozen = replace(
                calibration_for(prepared.timeline),
                graph_node_extra_ns=200,
                graph_copy_transition_ns=0,
                copy_launch_host_ns=5_827,
                copy_warm_host_ns=5_570,
            )
            errors[w.name] = evaluate(prepared, frozen).error_frac
        assert min(errors.values()) > -0.01  # all but PointNet's −0.1 % read high
        misses[recording] = {n for n, e in errors.items() if abs(e) > 0.10}
        medians[recording] = statistics.median(abs(e) for e in errors.values())
    assert misses == {r: {"diffusion_sampler_b4", "draft_decode_b1"} for r in misses}
    assert medians["holdout6"] == pytest.approx(0.0910, abs=0.001)
    assert medians["holdout6_rerun"] == pytest.approx(0.0796, abs=0.001)


def test_recent_verdicts_agree_with_what_replay_did() -> None:
    """On the 141 recordings of the eighteen sets each step's verdict agrees with the saving
    replay measurably brought (compute-bound: the concurrency set's two large GEMMs, 7.5 %,
    holdout12's graph attention and sliding-window attention, 6 % and 8 %, holdout13's Hyena
    FFT convolution on both leases and its YOLO decode on the first, holdout14's ConvNeXt
    blocks on the rerun's lease, 5 %; holdout12's NeRF, 16 %, reads mixed), and no region's
    verdict contradicts its predicted saving — but for the steps fed many inputs (the
    twelve-input step below; holdout16's Lion update fed its 60 gradients, 45 MB, where
    replay lost 34-35 % and the trace, which does not say what the static inputs would be,
    reads launch-bound at 76 % and 56 %) and three
    whose eager time is off: holdout13's Set Transformer (replay saved 51 %; eager from the
    trace 48 % low, 12 % predicted: mixed), holdout14's ConvNeXt blocks on the first lease
    (35 %, where the same step's eager p50 was 992 µs against 625 µs on the next lease,
    graphed 642 and 592; 1 % predicted: compute-bound), and holdout12's capsule routing
    (26 %; 7 % predicted: compute-bound, 21 % and launch-bound until its profiled host, launch
    calls a median 8.3 µs, was brought to a typical process's pace). The YOLO decode on the
    rerun's lease (6 %) read mixed at 13 % before that, compute-bound at 8 % since."""
    disagree = {
        ("holdout8", "input_heavy_b32"),
        ("holdout12", "capsule_routing_b64"),
        ("holdout13", "set_transformer_b64"),
        ("holdout14", "convnext_block_b8"),
        ("holdout16", "lion_foreach_update"),
        ("holdout16_rerun", "lion_foreach_update"),
    }
    workloads = [
        w
        for name in EXPECTED
        for w in validation_workloads(VALIDATION / name)
        if (name, w.name) not in disagree
    ]
    assert len(workloads) == 135
    assert step_verdicts_agreeing_with_replay(workloads) == {
        "launch-bound": 126,
        "compute-bound": 8,
        "mixed": 1,
    }


def test_a_step_fed_many_inputs_reads_launch_bound_yet_replay_lost() -> None:
    """holdout8's twelve-input step (6.6 MB of inputs the eager step reads in place): replay
    measured 54 % slower than eager, as the graph must copy every input in first. A trace
    does not say what a graph's static inputs would be: one small copy is assumed, and the
    step reads launch-bound with a 39 % saving. (With the copies the collector made, the
    prediction is -30 %, still 24 points off: the eager time from the trace is 41 % high.)"""
    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.parse import load_trace

    (w,) = [w for w in validation_workloads(VALIDATION / "holdout8") if w.name == "input_heavy_b32"]
    assert w.saving == pytest.approx(-0.5413, abs=0.001)
    step = diagnose(load_trace(w.trace)).region(w.region)
    assert step.verdict == "launch-bound"
    assert step.estimate is not None
    assert step.estimate.saving_frac == pytest.approx(0.3938, abs=0.002)
