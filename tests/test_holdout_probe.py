"""The H200 sets recorded with ``traceinspect profile``'s copy host-cost probe
(``results.json`` ``host_costs``; ``bench/validation_table.py --sets SET``, and
``--no-host-costs`` to predict as ``analyze`` does from the trace alone).

* ``holdout17``: eight families written and committed before any prediction of them (a CTR
  model fed eight inputs, four camera views through a depthwise-separable stem, a KV-cache
  decode fed its caches, a three-input triplet loss, a three-modality fusion, a GCN, a
  tabular ResNet, a capturable AdamW over 60 tensors), recorded once the probe was in and
  the model otherwise unchanged; ``holdout17_rerun``: the same eight on a second machine.
* ``probe_rerecord``, ``probe_rerecord_rerun``: earlier hold-out workloads that read more
  than 10 % off before the probe, recorded again with it on the same two machines
  (``record_probe_rerecord.sh``; not blind).
* ``holdout18``: eight more families (a GRU decoder step with attention fed five inputs,
  PointNet, a tiny UNet, BERT embeddings fed three index tensors, a mixture-density head fed
  two, an SGD-momentum loop over 40 tensors, a detection focal loss fed four, shifted-window
  attention), written and committed before any prediction of them and recorded once the
  built-in copy cost below was set, the probe timed before every graphed round: blind;
  ``holdout18_rerun``: the same eight on a second machine, a day later.
* ``holdout19``: eight more families (EDSR super-resolution, wav2vec 2.0's feature encoder,
  Medusa decoding heads, DeBERTa's disentangled attention, an MoE whose shared expert runs
  on a side stream, an Adagrad loop over 60 tensors, a Transformer encoder training step
  with a foreach AdamW, timestep-FiLM ResBlocks fed two inputs), written and committed
  before any prediction of them, recorded once the packing rule (``PACKED_EXPONENT``) and
  the H100 profile were in, with the model unchanged since: blind.
* ``holdout20``: eight more, every one forking work onto side streams (GPT-J's parallel
  attention and MLP, four task heads, an FPN neck with a stream per level fed four maps, a
  four-member ensemble, a bidirectional GRUCell loop, weights staged by device-to-device
  copies on a side stream, vision and text towers joined by cross-attention, metrics beside
  a second head), written and committed before any prediction of them, recorded with the
  model of ``holdout19``: at that freeze 5 of 8 within ±10 % either way (median 6.7 % with
  the probes, 9.4 % from the trace alone; the FPN neck +24.2 / +38.4 %, the towers +11.2 /
  +14.6 %, the GRU loops −13.8 / −12.9 %). Its FPN replay led to the last-wave rule
  (``Packing.releases``): not blind since. Its machine's copies probed 4.4-4.8 µs, half the
  built-in 9.2 µs: from the trace alone its small graphs read high.
* ``holdout21``: eight more, half of them on side streams (four convolution branches on
  four streams, four GELU experts on four streams, U-Net skips refined on a side stream,
  batch statistics on a side stream; T5's bucketed relative bias, Performer's linear
  attention, a Point Transformer layer with its kNN, R(2+1)D video blocks), written and
  committed after the last-wave rule and before any prediction of them: blind for the
  model as it stands. The batch-statistics step has no graphed row: `profile` found its
  replay's output different from eager (inside capture the script skips ``record_stream``,
  so a block's output the side stream still reads can be reused by the next block's
  allocation: a real capture hazard), so the set evaluates 7.
* ``holdout22`` and ``holdout22_rerun``: eight more (per-layer weight copies and probe
  heads on side streams, fake int8 quantization, greedy CTC decoding, a hypernetwork,
  neighborhood attention through ``unfold``, scatter/segment graph readouts, speculative
  decoding's verification), written and committed before the model change they check (a
  run of event records paired with the waits after it; a kernel of one wave makes room at
  80 or 90 % of its run) and recorded twice on one lease after it: blind. The graph
  readouts have no graphed row: ``segment_reduce`` copies its lengths to the host and
  synchronizes, so capture failed, as ``analyze``'s pre-flight said it would.
* ``holdout23`` and ``holdout23_rerun``: eight more (a GLU conv stack, bilinear pooling, a
  2:4-masked MLP, a distillation teacher on a side stream, a dense MoE through ``bmm``, GPU
  image augmentation, an SSIM loss, three modality encoders on three streams), written,
  committed and recorded twice on one lease with no model change since holdout22: blind.
* ``holdout26`` and ``holdout26_rerun``: eight more (a masked-autoencoder encoder, ALiBi
  decoder blocks, a CRF's Viterbi loop, a ConvLSTM loop, an Adafactor loop over 30 weights,
  a Chamfer loss, two bf16 GEMM towers on two streams, convolutions beside an MLP on two
  streams), written and committed with no model change since holdout25 and recorded on two
  leases: blind. As recorded, the MAE encoder's replay differed from eager (it
  draws random numbers, and the check drew them apart then), so the set evaluates 7.
* ``holdout27``: eight more (ConvMixer, TabNet's sparsemax steps, a mixup + dropout training
  step, DETR's matching cost, a Laplacian pyramid, two cuDNN LSTMs on two streams, PixelCNN's
  masked convolutions, a soft-DTW loop), written and committed with no model change since
  holdout25 and recorded once, after the correctness check drew eager and replay from one
  seed: blind; all eight compare equal.
* ``holdout28`` and ``holdout28_rerun``: eight more (a Muon optimizer step, latent attention,
  an RNN-T joint lattice, a BERT masked-LM head, 3D Gaussian splat projection, a paged-KV
  decode step, draft and target decoders on two streams, a MoCo step with its key encoder on
  a side stream), written and committed with no model change since holdout25 and recorded
  twice on one lease: blind. On the rerun the paged-KV step's replay differed from eager
  (max |error| 0.0156 at bf16 tolerance): its steps write into a page pool that the other
  request's block table reads, so the reference and the replay saw different caches; the
  set evaluates 15.
* ``holdout29`` and ``holdout29_rerun``: eight more (DiT blocks under classifier-free
  guidance on two streams, a prefill chunk beside a decode batch on two streams, batched
  multi-LoRA serving, EGNN layers, Informer's ProbSparse attention, a double-DQN step,
  ``torch.optim.AdamW`` fused and capturable, PatchTST), written and committed with no
  model change since holdout25 and recorded twice on one lease: blind.
* ``holdout30``: eight more (a trunk with three heads on side streams and nothing after the
  join, three towers on side streams, ResNet-18 at batch 1, a Llama decode step with a
  static KV cache, a pointer network's decode loop, int4 weights unpacked before GEMVs, a
  segmentation loss, MobileViT blocks), written and committed once the fork-origin rules
  that holdout29 led to were in, and recorded once: blind.
* ``holdout31`` and ``holdout31_rerun``: eight more (an MLP GAN training step, a
  spectral-norm discriminator, a 3D U-Net at batch 1, a GCN over a CSR adjacency through
  cuSPARSE, GPU feature preprocessing, gradient buckets on a side stream with an event per
  layer, CLIP's two towers on two side streams, a checkpointed MLP training step), written
  and committed with no model change since holdout30 and recorded twice on one lease: blind.
  The spectral-norm discriminator was recorded again twice on a later lease, once ``profile``
  checked a drifting step's replay against the eager call after it (its power iteration
  moves its vectors on every call; the first recordings read its replay incorrect).
* ``holdout32`` and ``holdout32_rerun``: eight more (an AdamW training step that never
  restores its weights, a Mamba-style selective scan as a Python loop, a beam-search decode
  step over a GRU, a weight-normed dilated TCN, a RealNVP flow, GAT layers with an edge
  softmax by scatter, a patchify convolution beside an MLP on two side streams, Transformer
  decoder layers with cross-attention), written and committed with no model change since
  holdout30 and recorded twice on one lease: blind.
* ``holdout33`` and ``holdout33_rerun``: eight more (a GPT-2-style greedy decode step over
  a KV cache, ViT-B/16 at batch 1, a Whisper-style audio encoder, an MLP training step under
  bf16 autocast, a Stable Diffusion UNet mid block, a LLaMA-style GQA prefill, ResNet-50
  channels-last at batch 16, the next batch normalized on a side stream beside a conv net),
  written and committed with no model change since holdout30 and recorded twice on one
  lease: blind.
* ``holdout34`` and ``holdout34_rerun``: eight more (an N-BEATS forecaster, a HiFi-GAN
  generator, a Soft Actor-Critic update, a Tacotron 2 decoder loop, TimeSformer's divided
  space-time attention, a BERT-style training step with ``clip_grad_norm_``, segmentation
  and depth heads on two side streams with a fused output after the join, audio and text
  encoders on two side streams fused by cross-attention after the join), likewise: blind.
* ``holdout35`` and ``holdout35_rerun``: eight more, five with work after a join of side
  streams (stereo matching with a shared tower on two streams, two-stream RGB and
  optical-flow nets, a message-passing GNN beside a SMILES encoder, a cascaded segmentation
  with two fork/join rounds, three heads on three streams with a combined loss), and
  EfficientNet-B0, DGCNN's EdgeConv and an LSTM language-model training step; likewise:
  blind.
* ``holdout36``: four more (GPT-NeoX parallel-residual layers, DeepSets, a convolutional
  CTC acoustic model with greedy decoding, RMSNorm + SwiGLU MLP blocks), written and
  committed before recording and recorded once, after a slow profiled host was brought to a
  typical pace: blind for that rule.
* ``holdout37`` and ``holdout37_rerun``: eight more, four fed five to seven small inputs (a
  Deep Interest Network with target attention, Matrix NMS post-processing, a GINE molecule
  readout, FastSpeech 2's variance adaptor) and ShuffleNet V2, gMLP, Slot Attention and a
  Linformer encoder, written and committed before recording and recorded twice on one lease
  after each input copy was charged at the pace of the trace's host: blind for that rule.
* ``holdout38`` and ``holdout38_rerun``: eight more, three on two and three side streams
  with work after each join (SlowFast over three fork/join rounds, a SiamRPN tracking step,
  a cut-down HRNet), SDF sphere tracing with soft shadows, modern Hopfield pooling, FNet,
  NODE's oblivious trees and a multichannel TextCNN; written and committed before recording,
  recorded twice on one lease with the model of holdout37: blind.
* ``holdout39`` and ``holdout39_rerun``: eight more, four whose side-stream branches differ
  in kind with work after the join (Mask R-CNN's box and mask heads, a multimodal ranker with
  an image CNN beside embedding bags and an MLP, a 3D-conv video encoder beside a text
  encoder, a speech enhancer's magnitude and phase branches), DeepLabV3+'s head, ECAPA-TDNN,
  spatial-transformer traffic signs and xDeepFM; likewise: blind for the model as it
  stands.
* ``holdout40`` and ``holdout40_rerun``: eight more, three on two side streams with work
  after the join (ControlNet's encoder beside its control copy, a SAC actor beside twin
  critics, EfficientDet's class and box heads after two BiFPN layers), DenseNet-121 dense
  blocks, a BLIP-2 Q-Former, MSA axial attention, a Temporal Fusion Transformer's variable
  selection and an instant-NGP hash grid; likewise.
* ``holdout41`` and ``holdout41_rerun``: eight more, three on two side streams with work
  after the join (a query encoder beside a passage reader, one GAN discriminator on a real
  and a fake batch, a DBNet-like text detector beside a CRNN recognizer), a Graphormer,
  Conv-TasNet, BigGAN blocks with class-conditional BatchNorm, Reformer's LSH attention and
  PointPillars; likewise, 7 of 8 within ±10 % on each at its freeze. Its OCR step's miss
  led to the replay's dependencies leaving out timing coincidences beside the trace's
  waits (``infer_dependencies``): not blind since.
* ``holdout42`` and ``holdout42_rerun``: eight more, five of them cuDNN RNNs, three on two
  side streams with work after the join (a bidirectional GRU acoustic encoder beside an
  LSTM language model, one BiLSTM sentence encoder on two batches, a character BiLSTM
  beside word features before a word BiLSTM), a DeepAR LSTM forecast, Swin V2 blocks, a 1-D
  audio-diffusion UNet, Mamba-2's chunked SSD and a CNN-LSTM captioner; written and
  committed after that change and recorded twice on one lease: blind for it.
* ``holdout43``: eight more, three on side streams (FP32 cross-modal hashing towers, a TF32
  spectrogram CNN beside a meta-MLP, a three-stream document-layout model), AlphaFold's
  triangle updates, ESM-2, SchNet training, SegFormer and StyleGAN2's modulated
  convolutions; committed before the profiler costs were refitted and the schedule's two
  rules changed, recorded after: blind for them. Its hashing towers' miss (−11.2 %) led to
  long FP32 GEMMs slowing each other fully (``schedule.FP32_SLOWDOWN``).
* ``holdout43_rerun``, ``holdout44`` and ``holdout44_rerun``: ``holdout43`` again, and six
  fp32 workloads written to test that rule (wide MLP towers on three streams, a siamese
  tower on two views, an fp32 MLP beside a bf16 one, small fp32 heads, fp32 convolutions
  without TF32 on two streams, a deep fp32 MLP on one stream), committed before any
  recording and recorded after the rule, twice on one lease: blind for the model as it
  stands.

The probe read 6.2 to 10.7 µs per small copy (median 9.2 µs) on the sets before holdout18:
between machines, between processes on one machine and within one process (6.5 before a
candidate's timing, 9.8 after it). The built-in copy cost is that median since.
``holdout18_rerun``'s probes read 5.7 to 11.0 µs.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from conftest import (
    SAMPLES,
    assert_one_step_reads,
    assert_probe_prediction,
    assert_summary,
    fresh_row,
    recording_rows,
)

sys.path.insert(0, str(SAMPLES.parent / "bench"))
from validation_table import (  # noqa: E402
    VALIDATION_DIR,
    validation_workloads,
)

# set -> workload -> (measured graphed p50 µs, predicted µs with the probe's copy cost,
# predicted µs from the trace alone); the comments give both errors
EXPECTED: dict[str, dict[str, tuple[float, float, float]]] = {
    "holdout17": {
        "adamw_many_small_params": (358.8, 363.6, 364.0),  # +1.3 / +1.5 %
        "ctr_dense_sparse_8in_b64": (100.4, 119.4, 115.2),  # +19.0 / +14.8 %
        "depthwise_sep_4in_b8": (230.6, 248.4, 252.5),  # +7.7 / +9.5 %
        "graph_conv_2in_b1": (71.6, 65.4, 69.7),  # −8.6 / −2.6 %
        "kv_append_decode_4in": (83.5, 83.3, 89.4),  # −0.2 / +7.0 %
        "multimodal_3in_b16": (105.3, 101.0, 98.4),  # −4.1 / −6.6 %
        "tabular_resnet_b512": (183.8, 177.8, 176.9),  # −3.3 / −3.8 %
        "triplet_loss_3in_b32": (281.2, 274.8, 273.9),  # −2.3 / −2.6 %
    },
    "holdout17_rerun": {
        "adamw_many_small_params": (363.2, 363.9, 365.3),  # +0.2 / +0.6 %
        "ctr_dense_sparse_8in_b64": (133.3, 120.3, 115.2),  # −9.8 / −13.6 %
        "depthwise_sep_4in_b8": (248.2, 254.5, 244.7),  # +2.6 / −1.4 %
        "graph_conv_2in_b1": (67.9, 69.0, 65.4),  # +1.6 / −3.6 %
        "kv_append_decode_4in": (99.0, 94.9, 92.2),  # −4.2 / −6.9 %
        "multimodal_3in_b16": (102.2, 99.9, 97.6),  # −2.3 / −4.5 %
        "tabular_resnet_b512": (175.9, 176.2, 176.8),  # +0.1 / +0.5 %
        "triplet_loss_3in_b32": (268.9, 272.1, 273.6),  # +1.2 / +1.8 %
    },
    "probe_rerecord": {
        "dcn_v2_streams_b1024": (147.9, 153.8, 156.5),  # +4.0 / +5.8 %
        "feature_fusion_6in_b32": (102.1, 99.1, 83.5),  # −2.9 / −18.2 %
        "siamese_streams_b32": (76.1, 76.8, 79.1),  # +1.0 / +4.0 %
        "wide_deep_4in_streams_b256": (86.5, 81.6, 76.6),  # −5.7 / −11.5 %
    },
    "probe_rerecord_rerun": {
        "dcn_v2_streams_b1024": (158.1, 160.1, 157.9),  # +1.3 / −0.1 %
        # +21.9 / +26.2 % while every layer's wait was tied to the last dequantization
        "dequant_prefetch_b16": (44.7, 44.8, 46.7),  # +0.2 / +4.5 %
        "expert_choice_moe_b16": (168.1, 150.3, 149.4),  # −10.6 / −11.1 %
        "feature_fusion_6in_b32": (84.3, 85.4, 85.6),  # +1.3 / +1.5 %
        "gumbel_softmax_vae_b256": (120.4, 118.6, 118.1),  # −1.5 / −1.9 %
        "input_heavy_b32": (222.5, 221.7, 223.2),  # −0.4 / +0.3 %
        "lm_head_topk_b8": (128.9, 124.6, 124.5),  # −3.3 / −3.3 %
        "recsys_embed_mlp_b512": (164.1, 186.5, 189.2),  # +13.7 / +15.3 %
        "rmsprop_loop": (1465.5, 1561.9, 1445.3),  # +6.6 / −1.4 %
        "siamese_streams_b32": (88.8, 81.2, 82.7),  # −8.5 / −6.9 %
        "streams_pipeline": (132.0, 118.3, 116.5),  # −10.4 / −11.8 %
        "wide_deep_4in_streams_b256": (69.0, 75.6, 80.7),  # +9.6 / +17.0 %
    },
    "holdout18": {
        "focal_loss_detection_4in_b4": (123.8, 124.7, 122.1),  # +0.7 / −1.4 %
        "mixture_density_head_2in_b256": (129.0, 128.4, 128.6),  # −0.5 / −0.4 %
        "pointnet_b8": (177.8, 175.4, 174.7),  # −1.4 / −1.7 %
        "seq2seq_gru_decoder_5in_b16": (191.6, 185.5, 178.4),  # −3.1 / −6.9 %
        "sgd_momentum_loop_40params": (240.0, 245.1, 244.0),  # +2.1 / +1.6 %
        "swin_window_attn_b4": (199.3, 203.3, 205.0),  # +2.0 / +2.9 %
        "token_type_pos_embed_3in_b32": (102.0, 108.8, 111.7),  # +6.6 / +9.5 %
        "unet_tiny_b2": (265.2, 278.7, 278.3),  # +5.1 / +5.0 %
    },
    "holdout18_rerun": {
        "focal_loss_detection_4in_b4": (113.7, 116.9, 114.8),  # +2.8 / +0.9 %
        "mixture_density_head_2in_b256": (132.0, 129.2, 127.6),  # −2.1 / −3.3 %
        "pointnet_b8": (168.6, 170.0, 173.1),  # +0.8 / +2.7 %
        "seq2seq_gru_decoder_5in_b16": (171.4, 173.7, 175.4),  # +1.4 / +2.4 %
        "sgd_momentum_loop_40params": (237.2, 242.1, 241.7),  # +2.1 / +1.9 %
        "swin_window_attn_b4": (202.0, 202.7, 204.3),  # +0.4 / +1.2 %
        "token_type_pos_embed_3in_b32": (100.5, 108.1, 114.5),  # +7.6 / +14.0 %
        "unet_tiny_b2": (253.1, 272.7, 273.5),  # +7.7 / +8.0 %
    },
    "holdout19": {
        "adagrad_loop_60params": (666.3, 663.0, 662.7),  # −0.5 / −0.5 %
        "deberta_relpos_attn_b4": (218.4, 221.5, 224.4),  # +1.4 / +2.8 %
        "edsr_pixelshuffle_b4": (887.2, 900.5, 898.2),  # +1.5 / +1.2 %
        "encoder_train_step_b8": (615.3, 616.5, 619.7),  # +0.2 / +0.7 %
        "medusa_heads_decode_b1": (513.2, 486.0, 485.3),  # −5.3 / −5.4 %
        "shared_expert_streams_b16": (346.8, 365.1, 365.2),  # +5.3 / +5.3 %
        "timestep_film_resblock_b8": (251.5, 255.3, 251.0),  # +1.5 / −0.2 %
        "wav2vec_feature_encoder_b2": (260.1, 274.6, 273.9),  # +5.5 / +5.3 %
    },
    "holdout20": {
        # two chains of ~120 small kernels side by side: the replay (550-605 µs profiled)
        # overlapped them less than the schedule, which pays node costs per chain
        "bidir_gru_cells_2streams_b16": (543.0, 584.6, 584.3),  # +7.7 / +7.6 %
        "ensemble_mlp_4streams_b16": (90.6, 89.4, 90.2),  # −1.3 / −0.5 %
        # the four levels' NCHW/NHWC transposes and 3x3 convolutions overlap in the replay
        # (114 µs of GPU time profiled, 137 predicted at the freeze, 121 now); four inputs of
        # 7.8 MB copied in
        "fpn_lateral_streams_b2": (135.8, 150.0, 152.2),  # +10.5 / +12.1 %
        "metrics_side_stream_b512": (110.9, 109.2, 110.5),  # −1.5 / −0.3 %
        "multitask_heads_4streams_b64": (40.6, 43.0, 43.6),  # +5.9 / +7.5 %
        "parallel_attn_mlp_streams_b8": (157.1, 150.6, 151.6),  # −4.1 / −3.5 %
        "vision_text_towers_streams_b4": (294.3, 321.3, 322.1),  # +9.2 / +9.4 %
        "weight_prefetch_copy_stream_b8": (132.6, 139.3, 139.8),  # +5.0 / +5.4 %
    },
    "holdout21": {
        # measured just under its range (516.0 µs against 522-610) until a kernel of one wave
        # made room at 80 or 90 % of its run (+7.9 / +8.4 % then)
        "grouped_conv_branches_4streams_b8": (516.0, 564.1, 566.6),  # +9.3 / +9.8 %
        "moe_gelu_4streams_b32": (290.3, 288.0, 288.0),  # −0.8 / −0.8 %
        "performer_linear_attn_b4": (1868.1, 1852.5, 1851.3),  # −0.8 / −0.9 %
        "point_transformer_knn_b4": (1487.2, 1446.4, 1445.2),  # −2.7 / −2.8 %
        "r2plus1d_video_b2": (577.9, 600.3, 600.8),  # +3.9 / +4.0 %
        "t5_relative_bias_encoder_b8": (454.5, 461.9, 461.8),  # +1.6 / +1.6 %
        "unet_skip_side_stream_b2": (740.7, 749.4, 752.4),  # +1.2 / +1.6 %
    },
    # recorded twice on one lease, each in its own processes
    "holdout22": {
        "aux_probes_side_stream_b16": (792.5, 741.9, 742.8),  # −6.4 / −6.3 %
        "ctc_greedy_decode_b16": (58.0, 60.5, 63.2),  # +4.2 / +8.9 %
        "fake_quant_absmax_b32": (176.8, 188.1, 188.7),  # +6.4 / +6.8 %
        # its process's copies probed 6.0-6.3 µs against the built-in 9.2 (two inputs)
        "hypernet_per_sample_mlp_b64": (61.7, 66.4, 66.2),  # +7.5 / +7.1 %
        "layer_copy_prefetch_b8": (55.1, 54.2, 53.1),  # −1.7 / −3.6 %
        "neighborhood_attn_unfold_b2": (622.9, 597.3, 597.8),  # −4.1 / −4.0 %
        "speculative_verify_b4": (136.8, 132.6, 134.9),  # −3.1 / −1.4 %
    },
    "holdout22_rerun": {
        "aux_probes_side_stream_b16": (814.1, 750.8, 750.8),  # −7.8 / −7.8 %
        "ctc_greedy_decode_b16": (57.2, 59.4, 61.1),  # +3.8 / +6.9 %
        "fake_quant_absmax_b32": (177.0, 187.9, 188.5),  # +6.2 / +6.5 %
        "hypernet_per_sample_mlp_b64": (69.4, 72.1, 70.1),  # +4.0 / +1.0 %
        "layer_copy_prefetch_b8": (51.6, 52.0, 53.0),  # +0.9 / +2.8 %
        "neighborhood_attn_unfold_b2": (580.2, 594.0, 594.1),  # +2.4 / +2.4 %
        # four inputs, its process's copies probed 5.5-6.0 µs; 117.8 µs here, 136.8 in the
        # first recording's process
        "speculative_verify_b4": (117.8, 120.4, 124.2),  # +2.3 / +5.4 %
    },
    # recorded twice on one lease with no model change since holdout22
    "holdout23": {
        "bilinear_pool_b32": (633.7, 627.5, 632.8),  # −1.0 / −0.1 %
        "dense_moe_bmm_b16": (115.6, 112.2, 112.7),  # −2.9 / −2.5 %
        "glu_conv_stack_b8": (515.2, 525.5, 525.7),  # +2.0 / +2.0 %
        "gpu_augment_b32": (309.1, 321.8, 325.6),  # +4.1 / +5.3 %
        "masked_sparse_mlp_b64": (48.4, 49.1, 49.7),  # +1.5 / +2.6 %
        "ssim_loss_b8": (483.2, 459.7, 458.0),  # −4.9 / −5.2 %
        "teacher_kl_side_stream_b32": (177.3, 171.4, 169.2),  # −3.3 / −4.6 %
        # three encoders on three streams: their GEMMs and convolutions fit side by side
        # (device shares 0.16-0.76); the replay ran them 2.3-3x as long (the text GEMM 18 ->
        # 52 µs, the audio convolution 43 -> 97 µs), the schedule 1.3-1.5x beside each other
        # (MATRIX_SLOWDOWN; at their pace alone −26.9 / −27.1 %)
        "tri_encoder_3streams_b16": (345.8, 331.0, 330.3),  # −4.3 / −4.5 %
    },
    "holdout23_rerun": {
        "bilinear_pool_b32": (638.3, 631.3, 631.6),  # −1.1 / −1.1 %
        "dense_moe_bmm_b16": (113.6, 110.5, 112.2),  # −2.7 / −1.2 %
        "glu_conv_stack_b8": (514.1, 527.5, 526.8),  # +2.6 / +2.5 %
        "gpu_augment_b32": (335.1, 330.1, 333.2),  # −1.5 / −0.6 %
        "masked_sparse_mlp_b64": (44.7, 47.3, 47.6),  # +5.9 / +6.7 %
        "ssim_loss_b8": (493.5, 457.5, 455.4),  # −7.3 / −7.7 %
        "teacher_kl_side_stream_b32": (168.0, 166.6, 172.3),  # −0.9 / +2.5 %
        "tri_encoder_3streams_b16": (335.0, 325.6, 331.5),  # −2.8 / −1.0 %
    },
    # recorded twice after MATRIX_SLOWDOWN 1.0 past a 4 µs latency was frozen, which read
    # twin_fp32_mlp_2streams_b64 +24.2 / +24.6 % and +25.7 % (14 of 16 within ±10 %); the
    # per-kernel fit adopted then (0.5 past 1 µs) had been measured before the recording
    "holdout24": {
        "conv_kernel_sizes_2streams_b4": (165.3, 171.4, 173.5),  # +3.6 / +5.0 %
        "cross_stitch_multitask_2streams_b32": (105.5, 108.8, 109.9),  # +3.1 / +4.2 %
        "ema_teacher_update_side_stream_b32": (254.6, 244.5, 244.5),  # −4.0 / −4.0 %
        "kan_spline_layer_b64": (287.6, 309.2, 307.4),  # +7.5 / +6.9 %
        "mixture_of_depths_b8": (414.1, 415.2, 418.4),  # +0.3 / +1.0 %
        "qkv_proj_3streams_bf16_b8": (71.2, 66.9, 66.4),  # −6.0 / −6.7 %
        "retention_decay_b4": (310.2, 313.3, 315.0),  # +1.0 / +1.5 %
        # two FP32 MLP branches: 128-block GEMMs (0.97 of the SMs) of 25-38 µs alone ran
        # 1.2-1.57x side by side (−24.8 / −23.1 % at their pace alone)
        "twin_fp32_mlp_2streams_b64": (178.2, 182.3, 185.2),  # +2.3 / +4.0 %
    },
    "holdout24_rerun": {
        "conv_kernel_sizes_2streams_b4": (175.2, 173.3, 173.2),  # −1.1 / −1.2 %
        "cross_stitch_multitask_2streams_b32": (111.9, 110.9, 111.5),  # −0.9 / −0.4 %
        "ema_teacher_update_side_stream_b32": (254.8, 244.7, 243.8),  # −4.0 / −4.3 %
        "kan_spline_layer_b64": (282.4, 308.7, 307.5),  # +9.3 / +8.9 %
        "mixture_of_depths_b8": (418.0, 416.6, 417.8),  # −0.3 / −0.1 %
        "qkv_proj_3streams_bf16_b8": (67.6, 65.6, 66.2),  # −2.9 / −2.0 %
        "retention_decay_b4": (310.2, 311.4, 312.3),  # +0.4 / +0.7 %
        "twin_fp32_mlp_2streams_b64": (177.0, 182.7, 185.4),  # +3.2 / +4.7 %
    },
    # recorded twice after the model of holdout24's pins was committed: blind
    "holdout25": {
        "attn_beside_conv_2streams_b4": (196.5, 204.6, 200.7),  # +4.1 / +2.2 %
        "bf16_experts_2streams_b256": (61.1, 58.0, 57.8),  # −5.1 / −5.4 %
        "conv_towers_bf16_2streams_b8": (189.8, 215.8, 213.9),  # +13.7 / +12.7 %
        "delta_rule_scan_loop_b4": (967.9, 975.0, 975.6),  # +0.7 / +0.8 %
        "dynamic_conv_b16": (122.1, 123.7, 126.4),  # +1.3 / +3.5 %
        # three chains of FP32 GEMMs (256 blocks, 0.48 of the block slots, every SM) on three
        # streams: 120 µs alone, 195-400 µs side by side in the replay, whose span is the sum
        # of the six GEMMs' time alone; the schedule runs two at once, each 1.5x, and the
        # eager trace, where they overlapped too, is taken back by as little
        "fp32_gemm_chains_3streams_b512": (711.9, 691.2, 690.1),  # −2.9 / −3.0 %
        "transformer_decoder_layer_b8": (473.1, 473.7, 477.2),  # +0.1 / +0.9 %
        "vicreg_loss_b256": (550.5, 533.6, 531.7),  # −3.1 / −3.4 %
    },
    "holdout25_rerun": {
        "attn_beside_conv_2streams_b4": (189.9, 202.1, 201.7),  # +6.4 / +6.2 %
        "bf16_experts_2streams_b256": (60.6, 58.1, 58.3),  # −4.1 / −3.8 %
        "conv_towers_bf16_2streams_b8": (186.0, 212.2, 212.8),  # +14.1 / +14.4 %
        "delta_rule_scan_loop_b4": (946.8, 974.3, 975.7),  # +2.9 / +3.0 %
        "dynamic_conv_b16": (120.9, 124.3, 127.2),  # +2.9 / +5.3 %
        "fp32_gemm_chains_3streams_b512": (733.4, 804.7, 802.7),  # +9.7 / +9.4 %
        "transformer_decoder_layer_b8": (495.9, 481.5, 478.8),  # −2.9 / −3.5 %
        "vicreg_loss_b256": (545.3, 532.7, 529.5),  # −2.3 / −2.9 %
    },
    # written and committed with the model unchanged since holdout25, recorded on two leases:
    # blind. The MAE encoder has no graphed row: its step draws torch.rand, and the check
    # then drew eager and replay apart ("incorrect"; measured 134.5 µs, predicted −4.1 %)
    "holdout26": {
        "adafactor_loop_30params": (2426.0, 2415.6, 2400.4),  # −0.4 / −1.1 %
        "alibi_decoder_b4": (302.8, 308.6, 310.6),  # +1.9 / +2.6 %
        # two towers of bf16 GEMMs (1,024 rows, 4.2-16.8 M weights) on two streams
        "bf16_gemm_pairs_2streams_b1024": (207.1, 189.2, 189.2),  # −8.6 / −8.6 %
        "chamfer_loss_b8": (317.8, 315.3, 320.3),  # −0.8 / +0.8 %
        # three convolutions with their BatchNorms, ReLUs and layout transposes (most of
        # them filling the block slots, 1-13 µs) beside four small GEMMs on a second stream:
        # the replay ran the GEMMs in among them (79 µs of GPU span); the schedule has them
        # wait for room (94 µs)
        "conv_beside_mlp_2streams_b16": (101.3, 104.0, 109.4),  # +2.6 / +8.0 %
        "convlstm_loop_b4": (410.1, 439.4, 441.4),  # +7.1 / +7.6 %
        "crf_viterbi_loop_b16": (590.4, 620.5, 620.3),  # +5.1 / +5.1 %
    },
    "holdout26_rerun": {
        "adafactor_loop_30params": (2636.5, 2484.7, 2506.4),  # −5.8 / −4.9 %
        "alibi_decoder_b4": (311.3, 313.4, 311.7),  # +0.7 / +0.1 %
        "bf16_gemm_pairs_2streams_b1024": (206.6, 188.6, 189.1),  # −8.7 / −8.5 %
        "chamfer_loss_b8": (339.1, 318.9, 319.9),  # −6.0 / −5.7 %
        "conv_beside_mlp_2streams_b16": (100.3, 103.3, 106.2),  # +2.9 / +5.8 %
        "convlstm_loop_b4": (411.1, 440.4, 441.0),  # +7.1 / +7.3 %
        "crf_viterbi_loop_b16": (586.2, 612.5, 613.7),  # +4.5 / +4.7 %
    },
    # written and committed with the model unchanged since holdout25, recorded once: blind;
    # every graph compares equal with eager, the mixup + dropout training step too (its
    # random draws from one seed on both sides)
    "holdout27": {
        "convmixer_block_b8": (276.1, 290.6, 292.7),  # +5.3 / +6.0 %
        "detr_matching_cost_b8": (177.6, 183.6, 184.0),  # +3.4 / +3.6 %
        "laplacian_pyramid_b8": (267.4, 268.7, 269.3),  # +0.5 / +0.7 %
        # two cuDNN LSTMs (their layers on cuDNN's own streams) on two side streams: +22.9 %
        # while the waits cuDNN makes inside its call read as waiting on every stream
        "lstm_pair_2streams_b32": (932.6, 950.2, 946.9),  # +1.9 / +1.5 %
        "mixup_dropout_train_b64": (310.8, 280.1, 276.9),  # −9.9 / −10.9 %
        "pixelcnn_masked_conv_b16": (668.3, 669.4, 670.2),  # +0.2 / +0.3 %
        "soft_dtw_loop_b16": (1936.7, 2073.0, 2075.1),  # +7.0 / +7.1 %
        "sparsemax_tabnet_b256": (263.0, 276.3, 278.5),  # +5.1 / +5.9 %
    },
    # written and committed with the model unchanged since holdout25 and recorded twice on
    # one lease: blind; also blind for the one-wave tail candidate (README), which predicts
    # every row of both the same
    "holdout28": {
        "bert_mlm_head_b16": (246.2, 231.6, 224.5),  # −5.9 / −8.8 %
        "draft_target_2streams_b1": (531.4, 516.9, 518.5),  # −2.7 / −2.4 %
        "gaussian_splat_project_b1": (1533.9, 1538.1, 1536.2),  # +0.3 / +0.1 %
        "mla_latent_attention_b4": (414.4, 411.1, 410.0),  # −0.8 / −1.1 %
        "moco_queue_2streams_b128": (176.1, 160.2, 157.4),  # −9.0 / −10.6 %
        "muon_newton_schulz_12params": (1474.3, 1450.6, 1438.8),  # −1.6 / −2.4 %
        "paged_kv_decode_b8": (487.0, 473.1, 471.7),  # −2.9 / −3.1 %
        "rnnt_joint_b4": (331.7, 321.0, 318.8),  # −3.2 / −3.9 %
    },
    "holdout28_rerun": {
        "bert_mlm_head_b16": (230.4, 225.3, 228.9),  # −2.2 / −0.7 %
        "draft_target_2streams_b1": (533.6, 518.1, 518.4),  # −2.9 / −2.8 %
        "gaussian_splat_project_b1": (1572.3, 1538.1, 1535.9),  # −2.2 / −2.3 %
        "mla_latent_attention_b4": (444.8, 414.2, 410.8),  # −6.9 / −7.6 %
        "moco_queue_2streams_b128": (156.4, 152.0, 157.2),  # −2.8 / +0.5 %
        "muon_newton_schulz_12params": (1474.8, 1462.2, 1444.1),  # −0.9 / −2.1 %
        "rnnt_joint_b4": (317.1, 315.0, 319.4),  # −0.6 / +0.7 %
    },
    # written and committed with the model unchanged since holdout25 and recorded twice on
    # one lease: blind
    "holdout29": {
        "adamw_fused_capturable_48params": (1546.5, 1446.1, 1431.4),  # −6.5 / −7.4 %
        "dit_cfg_2streams_b4": (544.0, 562.3, 559.0),  # +3.4 / +2.8 %
        "dqn_double_td_b256": (372.6, 359.0, 348.8),  # −3.6 / −6.4 %
        "egnn_layer_b1": (4048.6, 4021.4, 4018.7),  # −0.7 / −0.7 %
        "informer_probsparse_b16": (5217.2, 5216.5, 5215.3),  # −0.0 / −0.0 %
        "multi_lora_bgmv_b16": (396.1, 388.6, 390.6),  # −1.9 / −1.4 %
        "patchtst_b32": (1054.8, 1049.5, 1049.6),  # −0.5 / −0.5 %
        # a prefill chunk and a decode batch forked onto two streams, nothing after the
        # join: blind, the decode stream's fork was read as waiting on the whole prefill
        # (+45.9 / +45.8 %); forked from the stream that joins them since
        "prefill_decode_2streams": (516.9, 580.1, 579.4),  # +12.2 / +12.1 %
    },
    "holdout29_rerun": {
        "adamw_fused_capturable_48params": (1514.8, 1455.9, 1430.1),  # −3.9 / −5.6 %
        "dit_cfg_2streams_b4": (532.9, 560.4, 560.8),  # +5.2 / +5.2 %
        "dqn_double_td_b256": (357.8, 356.4, 349.1),  # −0.4 / −2.4 %
        "egnn_layer_b1": (4074.9, 4025.5, 4023.4),  # −1.2 / −1.3 %
        "informer_probsparse_b16": (5236.0, 5209.7, 5206.2),  # −0.5 / −0.6 %
        "multi_lora_bgmv_b16": (395.5, 393.7, 390.8),  # −0.5 / −1.2 %
        "patchtst_b32": (1102.8, 1047.8, 1045.5),  # −5.0 / −5.2 %
        "prefill_decode_2streams": (536.3, 582.5, 578.6),  # +8.6 / +7.9 %
    },
    # written and committed with the model as it stands (the fork-origin rules included) and
    # recorded once: blind
    "holdout30": {
        "int4_unpack_gemv_b1": (3726.7, 3742.6, 3742.0),  # +0.4 / +0.4 %
        "llama_decode_static_cache_b1": (724.8, 700.7, 697.4),  # −3.3 / −3.8 %
        "mobilevit_block_b8": (760.6, 774.3, 774.1),  # +1.8 / +1.8 %
        "pointer_net_decode_loop_b8": (3818.4, 3947.1, 3945.3),  # +3.4 / +3.3 %
        "resnet18_b1": (371.3, 370.8, 370.1),  # −0.1 / −0.3 %
        "seg_dice_focal_loss_b8": (1149.2, 1140.2, 1138.5),  # −0.8 / −0.9 %
        "three_towers_sidestreams_b16": (423.3, 415.3, 420.0),  # −1.9 / −0.8 %
        "trunk_heads_3streams_b64": (66.1, 64.6, 65.6),  # −2.3 / −0.7 %
    },
    # written and committed with the model unchanged since holdout30 and recorded twice on
    # one lease (the spectral-norm discriminator twice on a later one): blind
    "holdout31": {
        "bucketize_preprocess_b4096": (278.2, 272.7, 271.2),  # −2.0 / −2.5 %
        "ckpt_mlp_train_b32": (1396.6, 1383.4, 1383.0),  # −0.9 / −1.0 %
        "clip_towers_2streams_b32": (1026.7, 912.3, 911.0),  # −11.1 / −11.3 %
        "gan_train_step_b64": (499.0, 493.9, 494.6),  # −1.0 / −0.9 %
        "grad_bucket_side_stream_b32": (653.6, 607.5, 612.5),  # −7.1 / −6.3 %
        "sparse_gcn_csr_b1": (376.9, 374.1, 375.6),  # −0.7 / −0.3 %
        "spectral_norm_disc_b16": (346.6, 369.9, 373.3),  # +6.7 / +7.7 %
        "unet3d_b1": (1264.3, 1248.1, 1247.5),  # −1.3 / −1.3 %
    },
    "holdout31_rerun": {
        "bucketize_preprocess_b4096": (273.8, 271.6, 271.3),  # −0.8 / −0.9 %
        "ckpt_mlp_train_b32": (1383.5, 1382.6, 1382.7),  # −0.1 / −0.1 %
        "clip_towers_2streams_b32": (1062.2, 925.0, 921.8),  # −12.9 / −13.2 %
        "gan_train_step_b64": (498.9, 494.1, 494.4),  # −1.0 / −0.9 %
        "grad_bucket_side_stream_b32": (671.1, 618.7, 617.7),  # −7.8 / −8.0 %
        "sparse_gcn_csr_b1": (374.3, 374.3, 376.3),  # −0.0 / +0.5 %
        "spectral_norm_disc_b16": (350.6, 369.2, 369.9),  # +5.3 / +5.5 %
        "unet3d_b1": (1252.4, 1250.2, 1252.6),  # −0.2 / +0.0 %
    },
    # written and committed with the model unchanged since holdout30 and recorded twice on
    # one lease: blind
    "holdout32": {
        "adamw_train_no_reset_b64": (319.5, 315.9, 315.7),  # −1.1 / −1.2 %
        "beam_search_step_b4": (155.3, 158.3, 163.2),  # +2.0 / +5.1 %
        "conv_beside_gemm_2streams_b8": (314.4, 345.6, 349.5),  # +9.9 / +11.2 %
        "gat_edge_softmax_b1": (1076.8, 1057.1, 1055.7),  # −1.8 / −2.0 %
        "realnvp_coupling_b256": (544.3, 554.2, 556.4),  # +1.8 / +2.2 %
        "selective_scan_loop_b4": (946.5, 952.5, 948.7),  # +0.6 / +0.2 %
        "tcn_dilated_b16": (838.9, 853.3, 853.2),  # +1.7 / +1.7 %
        "transformer_decoder_xattn_b2": (394.1, 379.3, 381.6),  # −3.8 / −3.2 %
    },
    "holdout32_rerun": {
        "adamw_train_no_reset_b64": (324.1, 314.3, 314.7),  # −3.0 / −2.9 %
        "beam_search_step_b4": (167.5, 166.7, 160.4),  # −0.5 / −4.2 %
        "conv_beside_gemm_2streams_b8": (317.8, 345.4, 344.9),  # +8.7 / +8.5 %
        "gat_edge_softmax_b1": (1057.3, 1059.6, 1059.1),  # +0.2 / +0.2 %
        "realnvp_coupling_b256": (542.0, 554.3, 554.2),  # +2.3 / +2.3 %
        "selective_scan_loop_b4": (913.8, 949.8, 950.0),  # +3.9 / +4.0 %
        "tcn_dilated_b16": (824.6, 849.1, 852.1),  # +3.0 / +3.3 %
        "transformer_decoder_xattn_b2": (386.9, 377.5, 378.8),  # −2.4 / −2.1 %
    },
    # written and committed with the model unchanged since holdout30 and recorded twice on
    # one lease: blind
    "holdout33": {
        "gpt2_greedy_decode_kv_b4": (373.5, 363.7, 361.0),  # −2.6 / −3.4 %
        "llama_prefill_gqa_b1": (614.0, 633.9, 635.2),  # +3.2 / +3.4 %
        "mlp_train_autocast_b256": (505.6, 496.2, 493.5),  # −1.9 / −2.4 %
        "prefetch_normalize_side_stream_b32": (521.6, 527.4, 524.2),  # +1.1 / +0.5 %
        "resnet50_channels_last_b16": (1593.7, 1621.9, 1620.9),  # +1.8 / +1.7 %
        "sd_unet_midblock_b2": (463.7, 449.0, 443.1),  # −3.2 / −4.4 %
        "vit_b16_b1": (692.7, 691.3, 692.2),  # −0.2 / −0.1 %
        "whisper_encoder_b1": (492.0, 501.5, 500.5),  # +1.9 / +1.7 %
    },
    "holdout33_rerun": {
        "gpt2_greedy_decode_kv_b4": (372.5, 362.4, 361.7),  # −2.7 / −2.9 %
        "llama_prefill_gqa_b1": (649.2, 637.1, 635.4),  # −1.9 / −2.1 %
        "mlp_train_autocast_b256": (527.0, 493.4, 492.8),  # −6.4 / −6.5 %
        "prefetch_normalize_side_stream_b32": (508.5, 520.0, 522.9),  # +2.3 / +2.8 %
        "resnet50_channels_last_b16": (1581.4, 1619.4, 1619.7),  # +2.4 / +2.4 %
        "sd_unet_midblock_b2": (425.3, 441.2, 442.7),  # +3.7 / +4.1 %
        "vit_b16_b1": (686.7, 690.0, 690.1),  # +0.5 / +0.5 %
        "whisper_encoder_b1": (491.0, 498.3, 499.5),  # +1.5 / +1.7 %
    },
    # written and committed with the model unchanged since holdout30 and recorded twice on
    # one lease: blind
    "holdout34": {
        "audio_text_fusion_2streams_b8": (209.3, 222.0, 224.1),  # +6.1 / +7.1 %
        "bert_small_train_clipgrad_b16": (3239.3, 3279.0, 3278.6),  # +1.2 / +1.2 %
        "hifigan_generator_b1": (1279.0, 1336.0, 1333.2),  # +4.5 / +4.2 %
        "nbeats_stack_b256": (972.9, 947.6, 946.6),  # −2.6 / −2.7 %
        "sac_update_b256": (1076.4, 1063.3, 1053.1),  # −1.2 / −2.2 %
        "seg_depth_heads_2streams_b4": (758.6, 788.2, 788.9),  # +3.9 / +4.0 %
        "tacotron_attention_decode_b4": (1201.7, 1193.0, 1194.3),  # −0.7 / −0.6 %
        "timesformer_divided_attn_b2": (1713.3, 1739.5, 1740.5),  # +1.5 / +1.6 %
    },
    "holdout34_rerun": {
        "audio_text_fusion_2streams_b8": (214.3, 222.3, 223.9),  # +3.7 / +4.5 %
        "bert_small_train_clipgrad_b16": (3265.1, 3280.5, 3279.3),  # +0.5 / +0.4 %
        "hifigan_generator_b1": (1251.8, 1334.4, 1334.1),  # +6.6 / +6.6 %
        "nbeats_stack_b256": (959.3, 943.7, 944.1),  # −1.6 / −1.6 %
        "sac_update_b256": (1031.1, 1049.1, 1049.1),  # +1.8 / +1.8 %
        "seg_depth_heads_2streams_b4": (759.8, 788.7, 787.3),  # +3.8 / +3.6 %
        "tacotron_attention_decode_b4": (1206.0, 1192.6, 1194.1),  # −1.1 / −1.0 %
        "timesformer_divided_attn_b2": (1708.2, 1738.8, 1740.1),  # +1.8 / +1.9 %
    },
    # written and committed with the model unchanged since holdout30 and recorded twice on
    # one lease: blind
    "holdout35": {
        "cascade_refine_2rounds_2streams_b4": (485.4, 508.0, 510.6),  # +4.7 / +5.2 %
        "dgcnn_edgeconv_b8": (3539.7, 3598.1, 3598.1),  # +1.7 / +1.7 %
        "efficientnet_b0_b8": (1394.4, 1408.1, 1407.0),  # +1.0 / +0.9 %
        "graph_and_sequence_2streams_b16": (223.4, 207.8, 213.6),  # −7.0 / −4.4 %
        # +3.7 / +3.7 % while timing coincidences beside the waits were dependencies
        "lstm_lm_train_tbptt_b32": (4377.1, 4285.2, 4284.4),  # −2.1 / −2.1 %
        "multitask_loss_3heads_streams_b64": (91.4, 95.3, 105.4),  # +4.3 / +15.4 %
        "stereo_matching_2streams_b2": (833.4, 835.5, 835.3),  # +0.2 / +0.2 %
        "video_two_stream_rgb_flow_b4": (551.6, 588.7, 588.5),  # +6.7 / +6.7 %
    },
    "holdout35_rerun": {
        "cascade_refine_2rounds_2streams_b4": (478.1, 503.9, 504.3),  # +5.4 / +5.5 %
        "dgcnn_edgeconv_b8": (3489.1, 3593.5, 3596.0),  # +3.0 / +3.1 %
        "efficientnet_b0_b8": (1393.2, 1406.6, 1407.5),  # +1.0 / +1.0 %
        "graph_and_sequence_2streams_b16": (224.7, 209.5, 208.6),  # −6.7 / −7.1 %
        "lstm_lm_train_tbptt_b32": (4387.3, 4174.8, 4171.3),  # −4.8 / −4.9 %
        "multitask_loss_3heads_streams_b64": (94.0, 98.1, 105.6),  # +4.3 / +12.3 %
        "stereo_matching_2streams_b2": (816.6, 832.8, 830.9),  # +2.0 / +1.8 %
        "video_two_stream_rgb_flow_b4": (557.6, 591.7, 592.0),  # +6.1 / +6.2 %
    },
    # written and committed before recording, recorded once after a slow profiled host was
    # brought to a typical pace (eager.host_speed): blind for that too
    "holdout36": {
        "ctc_beam_free_asr_b8": (261.3, 272.4, 270.2),  # +4.2 / +3.4 %
        "deepsets_pooling_b256": (431.4, 428.9, 428.0),  # −0.6 / −0.8 %
        "gpt_neox_parallel_block_b2": (462.5, 456.2, 454.7),  # −1.4 / −1.7 %
        "rmsnorm_swiglu_mlp_stack_b32": (517.9, 533.1, 534.7),  # +2.9 / +3.2 %
    },
    # written and committed before recording, recorded twice on one lease after each input
    # copy was charged at the pace of the trace's host (eager.COPY_PER_LAUNCH_CALL): blind
    # for that too
    "holdout37": {
        "din_target_attention_7in_b256": (230.2, 234.5, 225.2),  # +1.9 / −2.1 %
        "fastspeech2_variance_adaptor_5in_b8": (300.9, 298.4, 288.6),  # −0.8 / −4.1 %
        "gine_molecule_readout_5in_b32": (229.5, 239.0, 237.6),  # +4.1 / +3.5 %
        "gmlp_spatial_gating_b8": (406.1, 377.7, 372.9),  # −7.0 / −8.2 %
        "linformer_encoder_b8": (1082.1, 1056.3, 1052.6),  # −2.4 / −2.7 %
        "matrix_nms_postprocess_5in_b8": (278.9, 283.5, 277.7),  # +1.7 / −0.4 %
        "shufflenet_v2_b8": (887.3, 875.7, 874.0),  # −1.3 / −1.5 %
        "slot_attention_b16": (930.1, 935.1, 934.8),  # +0.5 / +0.5 %
    },
    "holdout37_rerun": {
        "din_target_attention_7in_b256": (231.5, 234.6, 228.5),  # +1.4 / −1.3 %
        "fastspeech2_variance_adaptor_5in_b8": (265.3, 287.4, 289.0),  # +8.3 / +8.9 %
        "gine_molecule_readout_5in_b32": (245.1, 244.6, 237.6),  # −0.2 / −3.0 %
        "gmlp_spatial_gating_b8": (374.2, 376.5, 375.3),  # +0.6 / +0.3 %
        "linformer_encoder_b8": (1028.2, 1048.3, 1046.2),  # +2.0 / +1.8 %
        "matrix_nms_postprocess_5in_b8": (275.0, 280.9, 277.5),  # +2.1 / +0.9 %
        "shufflenet_v2_b8": (837.5, 870.6, 871.6),  # +4.0 / +4.1 %
        "slot_attention_b16": (936.9, 936.9, 935.1),  # −0.0 / −0.2 %
    },
    # written and committed before recording, recorded twice on one lease with the model of
    # holdout37: blind
    "holdout38": {
        "fnet_fourier_encoder_b16": (1232.4, 1278.1, 1278.2),  # +3.7 / +3.7 %
        "hopfield_lookup_pooling_b64": (1976.6, 2002.1, 2004.5),  # +1.3 / +1.4 %
        "hrnet_pose_3streams_b4": (650.1, 622.3, 623.3),  # −4.3 / −4.1 %
        "node_oblivious_trees_b256": (2162.2, 2140.9, 2139.2),  # −1.0 / −1.1 %
        "sdf_sphere_trace_soft_shadow_b1": (3486.9, 3546.2, 3547.0),  # +1.7 / +1.7 %
        "siamrpn_tracker_2streams_b8": (1280.6, 1317.5, 1323.1),  # +2.9 / +3.3 %
        "slowfast_3rounds_2streams_b2": (723.5, 765.1, 763.0),  # +5.7 / +5.5 %
        "textcnn_multichannel_b32": (1405.0, 1405.8, 1405.1),  # +0.1 / +0.0 %
    },
    "holdout38_rerun": {
        "fnet_fourier_encoder_b16": (1276.8, 1278.8, 1276.5),  # +0.2 / −0.0 %
        "hopfield_lookup_pooling_b64": (1977.5, 2007.2, 2008.3),  # +1.5 / +1.6 %
        "hrnet_pose_3streams_b4": (648.8, 622.6, 622.9),  # −4.0 / −4.0 %
        "node_oblivious_trees_b256": (2148.9, 2143.5, 2145.3),  # −0.2 / −0.2 %
        "sdf_sphere_trace_soft_shadow_b1": (3496.5, 3547.2, 3542.7),  # +1.5 / +1.3 %
        "siamrpn_tracker_2streams_b8": (1307.0, 1327.4, 1323.4),  # +1.6 / +1.3 %
        "slowfast_3rounds_2streams_b2": (740.8, 763.9, 762.7),  # +3.1 / +2.9 %
        "textcnn_multichannel_b32": (1403.5, 1411.8, 1410.7),  # +0.6 / +0.5 %
    },
    # written and committed before recording, recorded twice on one lease with the model of
    # holdout37: blind
    "holdout39": {
        "autoint_multimodal_rec_3streams_b128": (513.9, 519.2, 519.6),  # +1.0 / +1.1 %
        "deeplabv3plus_aspp_decoder_b2": (973.6, 965.2, 962.4),  # −0.9 / −1.1 %
        "ecapa_tdnn_speaker_b16": (1855.1, 1889.7, 1889.6),  # +1.9 / +1.9 %
        "gtsrb_spatial_transformers_b128": (2206.8, 2239.2, 2238.7),  # +1.5 / +1.5 %
        "maskrcnn_roi_heads_2streams_b2": (1092.2, 1163.4, 1167.0),  # +6.5 / +6.8 %
        "speech_enhance_mag_phase_2streams_b4": (1049.9, 1063.9, 1064.7),  # +1.3 / +1.4 %
        "video_text_itm_3dconv_2streams_b4": (851.5, 849.1, 850.3),  # −0.3 / −0.1 %
        "xdeepfm_cin_b1024": (1246.2, 1222.9, 1225.4),  # −1.9 / −1.7 %
    },
    "holdout39_rerun": {
        "autoint_multimodal_rec_3streams_b128": (521.1, 519.6, 519.0),  # −0.3 / −0.4 %
        "deeplabv3plus_aspp_decoder_b2": (941.6, 954.0, 954.6),  # +1.3 / +1.4 %
        "ecapa_tdnn_speaker_b16": (1851.3, 1887.0, 1890.1),  # +1.9 / +2.1 %
        "gtsrb_spatial_transformers_b128": (2244.0, 2248.0, 2246.0),  # +0.2 / +0.1 %
        "maskrcnn_roi_heads_2streams_b2": (1072.5, 1162.4, 1165.4),  # +8.4 / +8.7 %
        "speech_enhance_mag_phase_2streams_b4": (1049.4, 1061.8, 1062.2),  # +1.2 / +1.2 %
        "video_text_itm_3dconv_2streams_b4": (865.0, 855.2, 852.2),  # −1.1 / −1.5 %
        "xdeepfm_cin_b1024": (1297.6, 1231.6, 1230.0),  # −5.1 / −5.2 %
    },
    "holdout40": {
        "actor_critic_2streams_b512": (117.4, 117.0, 119.0),  # −0.4 / +1.3 %
        "axial_attention_msa_b2": (444.5, 450.9, 451.9),  # +1.4 / +1.7 %
        "bifpn_levels_2streams_b4": (1588.8, 1636.2, 1636.9),  # +3.0 / +3.0 %
        "controlnet_side_branch_2streams_b2": (1345.4, 1408.0, 1406.6),  # +4.7 / +4.5 %
        "densenet_dense_block_b8": (764.0, 735.1, 734.4),  # −3.8 / −3.9 %
        "hashgrid_encoding_mlp_b65536": (1137.8, 1167.1, 1169.4),  # +2.6 / +2.8 %
        "qformer_cross_attn_b8": (392.7, 389.5, 390.3),  # −0.8 / −0.6 %
        "tft_variable_selection_b64": (656.3, 656.2, 660.6),  # −0.0 / +0.6 %
    },
    "holdout40_rerun": {
        "actor_critic_2streams_b512": (108.2, 109.6, 114.3),  # +1.3 / +5.6 %
        "axial_attention_msa_b2": (439.8, 448.9, 449.7),  # +2.1 / +2.2 %
        "bifpn_levels_2streams_b4": (1575.0, 1626.3, 1628.0),  # +3.3 / +3.4 %
        "controlnet_side_branch_2streams_b2": (1288.5, 1398.2, 1398.6),  # +8.5 / +8.5 %
        "densenet_dense_block_b8": (773.0, 735.4, 733.7),  # −4.9 / −5.1 %
        "hashgrid_encoding_mlp_b65536": (1158.1, 1168.9, 1168.9),  # +0.9 / +0.9 %
        "qformer_cross_attn_b8": (390.3, 388.9, 391.5),  # −0.4 / +0.3 %
        "tft_variable_selection_b64": (646.8, 654.9, 659.4),  # +1.2 / +1.9 %
    },
    "holdout41": {
        "biggan_cbn_block_b16": (1159.2, 1134.5, 1133.6),  # −2.1 / −2.2 %
        "conv_tasnet_separator_b4": (6508.3, 6622.2, 6621.3),  # +1.8 / +1.7 %
        "gan_disc_real_fake_2streams_b32": (259.0, 268.2, 270.5),  # +3.6 / +4.4 %
        "graphormer_spatial_bias_b8": (239.3, 244.5, 249.5),  # +2.2 / +4.2 %
        # +11.7 % from the trace at its freeze, timing coincidences chaining the GRU's
        # two directions
        "ocr_det_rec_2streams_b4": (3056.8, 3026.4, 3019.6),  # −1.0 / −1.2 %
        "pointpillars_scatter_b2": (1461.3, 1488.3, 1489.9),  # +1.8 / +2.0 %
        "rag_retriever_reader_2streams_b4": (562.9, 570.3, 565.5),  # +1.3 / +0.5 %
        "reformer_lsh_attn_b4": (4157.6, 4250.5, 4249.5),  # +2.2 / +2.2 %
    },
    "holdout41_rerun": {
        "biggan_cbn_block_b16": (1099.8, 1123.4, 1129.7),  # +2.1 / +2.7 %
        "conv_tasnet_separator_b4": (6463.0, 6616.8, 6616.9),  # +2.4 / +2.4 %
        "gan_disc_real_fake_2streams_b32": (254.5, 265.4, 270.8),  # +4.3 / +6.4 %
        "graphormer_spatial_bias_b8": (242.2, 251.5, 241.4),  # +3.8 / −0.3 %
        "ocr_det_rec_2streams_b4": (3026.2, 3018.9, 3015.4),  # −0.2 / −0.4 %
        "pointpillars_scatter_b2": (1462.5, 1490.7, 1495.8),  # +1.9 / +2.3 %
        "rag_retriever_reader_2streams_b4": (615.3, 567.4, 565.6),  # −7.8 / −8.1 %
        "reformer_lsh_attn_b4": (4085.9, 4234.9, 4234.2),  # +3.6 / +3.6 %
    },
    "holdout42": {
        "bigru_asr_encoder_beside_lm_2streams_b8": (2649.4, 2805.8, 2804.4),  # +5.9 / +5.9 %
        "bilstm_char_word_ner_2streams_b16": (746.4, 671.4, 665.5),  # −10.0 / −10.8 %
        "deepar_lstm_forecast_b128": (2103.6, 1945.2, 1946.7),  # −7.5 / −7.5 %
        "mamba2_ssd_chunked_b2": (723.4, 716.9, 716.2),  # −0.9 / −1.0 %
        "siamese_bilstm_sentence_sim_2streams_b64": (674.7, 626.9, 628.5),  # −7.1 / −6.9 %
        "swin_v2_block_b4": (555.5, 551.3, 550.3),  # −0.8 / −0.9 %
        "unet1d_audio_diffusion_b4": (7185.7, 7285.6, 7284.5),  # +1.4 / +1.4 %
        "video_caption_cnn_lstm_b4": (582.2, 585.6, 580.0),  # +0.6 / −0.4 %
    },
    "holdout42_rerun": {
        "bigru_asr_encoder_beside_lm_2streams_b8": (2581.3, 2807.7, 2802.6),  # +8.8 / +8.6 %
        "bilstm_char_word_ner_2streams_b16": (745.4, 672.2, 665.2),  # −9.8 / −10.8 %
        "deepar_lstm_forecast_b128": (2122.4, 1942.9, 1946.0),  # −8.5 / −8.3 %
        "mamba2_ssd_chunked_b2": (711.9, 721.7, 721.2),  # +1.4 / +1.3 %
        "siamese_bilstm_sentence_sim_2streams_b64": (680.7, 631.4, 629.1),  # −7.2 / −7.6 %
        "swin_v2_block_b4": (531.9, 548.3, 549.5),  # +3.1 / +3.3 %
        "unet1d_audio_diffusion_b4": (7124.4, 7294.1, 7290.8),  # +2.4 / +2.3 %
        "video_caption_cnn_lstm_b4": (578.1, 585.0, 581.5),  # +1.2 / +0.6 %
    },
    "holdout43": {
        "alphafold_triangle_pair_stack_b1": (1028.0, 1066.1, 1065.5),  # +3.7 / +3.6 %
        "birdcall_tf32_spec_cnn_meta_mlp_2streams_b128": (1039.9, 1062.6, 1065.1),  # +2.2 / +2.4 %
        "cross_modal_hashing_fp32_towers_2streams_b512": (666.7, 683.5, 692.7),  # +2.5 / +3.9 %
        "doc_layout_vision_text_box_3streams_b8": (525.0, 523.9, 525.1),  # −0.2 / +0.0 %
        "esm2_rotary_encoder_b8": (2711.8, 2823.8, 2824.3),  # +4.1 / +4.2 %
        "schnet_cfconv_train_b32": (2439.2, 2397.3, 2402.3),  # −1.7 / −1.5 %
        "segformer_mit_b1_b4": (2633.1, 2748.7, 2749.4),  # +4.4 / +4.4 %
        "stylegan2_modconv_synthesis_b8": (6416.3, 6400.5, 6397.5),  # −0.2 / −0.3 %
    },
    "holdout43_rerun": {
        "alphafold_triangle_pair_stack_b1": (1032.9, 1067.1, 1069.3),  # +3.3 / +3.5 %
        "birdcall_tf32_spec_cnn_meta_mlp_2streams_b128": (1044.3, 1066.0, 1071.0),  # +2.1 / +2.6 %
        "cross_modal_hashing_fp32_towers_2streams_b512": (683.4, 699.1, 695.0),  # +2.3 / +1.7 %
        "doc_layout_vision_text_box_3streams_b8": (583.8, 538.6, 534.9),  # −7.7 / −8.4 %
        "esm2_rotary_encoder_b8": (2811.1, 2836.5, 2834.5),  # +0.9 / +0.8 %
        "schnet_cfconv_train_b32": (2435.1, 2409.8, 2405.2),  # −1.0 / −1.2 %
        "segformer_mit_b1_b4": (2646.1, 2755.8, 2755.5),  # +4.2 / +4.1 %
        "stylegan2_modconv_synthesis_b8": (6427.0, 6361.5, 6359.4),  # −1.0 / −1.1 %
    },
    "holdout44": {
        "fp32_conv_branches_2streams_b16": (925.5, 837.6, 836.8),  # −9.5 / −9.6 %
        "fp32_mlp_beside_bf16_mlp_2streams_b512": (604.2, 606.1, 607.4),  # +0.3 / +0.5 %
        "fp32_mlp_one_stream_b512": (1480.3, 1475.4, 1475.8),  # −0.3 / −0.3 %
        "fp32_siamese_towers_2streams_b384": (1249.8, 1233.1, 1232.3),  # −1.3 / −1.4 %
        "fp32_small_heads_2streams_b64": (251.8, 263.4, 260.4),  # +4.6 / +3.4 %
        "fp32_wide_mlp_towers_3streams_b256": (706.7, 764.4, 764.8),  # +8.2 / +8.2 %
    },
    "holdout44_rerun": {
        "fp32_conv_branches_2streams_b16": (866.2, 805.7, 806.1),  # −7.0 / −6.9 %
        "fp32_mlp_beside_bf16_mlp_2streams_b512": (609.7, 634.2, 634.5),  # +4.0 / +4.1 %
        "fp32_mlp_one_stream_b512": (1565.5, 1480.2, 1478.9),  # −5.4 / −5.5 %
        "fp32_siamese_towers_2streams_b384": (1240.9, 1200.2, 1203.5),  # −3.3 / −3.0 %
        "fp32_small_heads_2streams_b64": (220.6, 251.8, 252.1),  # +14.1 / +14.3 %
        "fp32_wide_mlp_towers_3streams_b256": (759.2, 787.9, 779.9),  # +3.8 / +2.7 %
    },
    # written before the model froze, blind: recorded on an H100 first (test_holdout_h100)
    "holdout45": {
        "conv_stack_beside_gemm_chain_2streams_b16": (227.7, 233.4, 231.3),  # +2.5 / +1.6 %
        "fp32_resnet_basic_blocks_b8": (430.2, 401.6, 401.1),  # −6.7 / −6.8 %
        # cuDNN's two fp32 GRU layers overlap in the replay; the schedule holds layer 2's
        # input GEMM behind the record launched just before its wait, one chunk late
        "gru_fp32_one_stream_b16": (1043.8, 1288.1, 1287.2),  # +23.4 / +23.3 %
        "lstm_beside_mlp_2streams_b32": (991.8, 1003.7, 1005.8),  # +1.2 / +1.4 %
        "ranker_10in_b128": (133.6, 135.4, 138.2),  # +1.3 / +3.4 %
        "sgd_momentum_foreach_update": (2050.5, 1954.4, 1917.6),  # −4.7 / −6.5 %
        "tf32_beside_fp32_gemms_2streams_b512": (676.9, 662.2, 661.5),  # −2.2 / −2.3 %
        "three_dense_heads_shared_feats_3streams_b2": (176.7, 175.8, 178.2),  # −0.5 / +0.8 %
    },
    "holdout45_rerun": {
        "conv_stack_beside_gemm_chain_2streams_b16": (235.4, 234.3, 226.7),  # −0.4 / −3.7 %
        "fp32_resnet_basic_blocks_b8": (396.0, 399.3, 400.1),  # +0.9 / +1.1 %
        "gru_fp32_one_stream_b16": (1060.1, 1268.3, 1266.3),  # +19.6 / +19.5 %
        "lstm_beside_mlp_2streams_b32": (1017.2, 1006.5, 1004.3),  # −1.1 / −1.3 %
        "ranker_10in_b128": (166.1, 162.7, 157.6),  # −2.1 / −5.1 %
        "sgd_momentum_foreach_update": (2056.8, 2013.4, 1935.4),  # −2.1 / −5.9 %
        "tf32_beside_fp32_gemms_2streams_b512": (672.3, 659.0, 660.7),  # −2.0 / −1.7 %
        "three_dense_heads_shared_feats_3streams_b2": (177.6, 177.3, 177.2),  # −0.2 / −0.2 %
    },
    # written after holdout45 was recorded on the H200 and recorded on an H100 first
    # (test_holdout_h100), then once on an H200 with the model unchanged
    "holdout46": {
        "bigru_beside_mlp_2streams_b16": (497.3, 507.3, 499.0),  # +2.0 / +0.3 %
        "bilstm_tagger_b32": (804.4, 809.7, 811.8),  # +0.7 / +0.9 %
        "decoder_layer_b4": (99.1, 98.3, 101.9),  # −0.8 / +2.8 %
        "gru_cell_greedy_decode_b32": (783.3, 801.8, 808.8),  # +2.4 / +3.2 %
        "relu_chains_3streams_b8": (305.1, 325.2, 321.1),  # +6.6 / +5.2 %
        "resnet_bottlenecks_cl_b16": (370.3, 373.1, 371.2),  # +0.8 / +0.2 %
        # cuDNN's three LSTM layers overlap in the replay, as holdout45's GRU layers (read
        # half way to handed over, HANDOVER_WEIGHT; +16.0 / +15.5 % before)
        "stacked_lstm_lm_b16": (859.6, 883.7, 879.2),  # +2.8 / +2.3 %
        "twin_lstm_encoders_2streams_b32": (813.8, 767.1, 764.7),  # −5.7 / −6.0 %
    },
    # written after holdout46 was recorded on the H200, blind: two processes of one lease
    "holdout47": {
        "colbert_late_interaction_2streams_b16": (602.3, 627.5, 634.1),  # +4.2 / +5.3 %
        "crossvit_dual_branch_2streams_b8": (1040.0, 1055.4, 1058.0),  # +1.5 / +1.7 %
        "mvcnn_view_pool_3streams_b8": (236.1, 243.6, 246.3),  # +3.2 / +4.3 %
        "nystromformer_encoder_b4": (1027.7, 1037.9, 1038.6),  # +1.0 / +1.1 %
        "regnety_800mf_stages_b16": (1011.0, 1022.2, 1022.3),  # +1.1 / +1.1 %
        "rgcn_basis_8relations_b1": (401.5, 418.0, 416.8),  # +4.1 / +3.8 %
        "siren_fp32_b65536": (1243.1, 1250.0, 1249.1),  # +0.6 / +0.5 %
        "topk_repetition_penalty_loop_b8": (1670.1, 1723.1, 1720.3),  # +3.2 / +3.0 %
    },
    "holdout47_rerun": {
        "colbert_late_interaction_2streams_b16": (608.8, 629.0, 632.4),  # +3.3 / +3.9 %
        "crossvit_dual_branch_2streams_b8": (1046.1, 1055.6, 1056.2),  # +0.9 / +1.0 %
        "mvcnn_view_pool_3streams_b8": (238.1, 246.1, 248.7),  # +3.4 / +4.5 %
        "nystromformer_encoder_b4": (1029.6, 1040.1, 1040.4),  # +1.0 / +1.1 %
        "regnety_800mf_stages_b16": (1011.7, 1022.1, 1023.2),  # +1.0 / +1.1 %
        "rgcn_basis_8relations_b1": (393.2, 415.9, 416.4),  # +5.8 / +5.9 %
        "siren_fp32_b65536": (1237.5, 1242.2, 1242.4),  # +0.4 / +0.4 %
        "topk_repetition_penalty_loop_b8": (1681.3, 1726.1, 1721.2),  # +2.7 / +2.4 %
    },
    # written after holdout47 was recorded on the H200, blind: two processes of one lease
    "holdout48": {
        "complex_kg_filtered_rank_2streams_b512": (888.9, 828.9, 828.9),  # −6.7 / −6.7 %
        "fsrcnn_x3_superres_b1": (2333.7, 2321.7, 2320.6),  # −0.5 / −0.6 %
        "funnel_transformer_encoder_b8": (776.9, 794.1, 797.1),  # +2.2 / +2.6 %
        "lennard_jones_verlet_loop_b8": (814.6, 876.3, 876.1),  # +7.6 / +7.5 %
        "meshgraphnet_processor_b1": (1665.3, 1712.4, 1722.7),  # +2.8 / +3.5 %
        "multiscale_patchgan_disc_3streams_b2": (755.2, 822.8, 824.3),  # +9.0 / +9.1 %
        "squeezenet11_fire_b64": (1773.5, 1811.0, 1811.5),  # +2.1 / +2.1 %
        "vit_tiny_cifar_train_adamw_b64": (1212.7, 1176.9, 1175.0),  # −2.9 / −3.1 %
    },
    "holdout48_rerun": {
        "complex_kg_filtered_rank_2streams_b512": (889.2, 822.7, 831.6),  # −7.5 / −6.5 %
        "fsrcnn_x3_superres_b1": (2337.6, 2324.5, 2321.8),  # −0.6 / −0.7 %
        "funnel_transformer_encoder_b8": (790.5, 799.0, 797.8),  # +1.1 / +0.9 %
        "lennard_jones_verlet_loop_b8": (855.0, 884.7, 882.5),  # +3.5 / +3.2 %
        "meshgraphnet_processor_b1": (1736.3, 1719.9, 1721.5),  # −0.9 / −0.9 %
        "multiscale_patchgan_disc_3streams_b2": (798.2, 820.9, 818.5),  # +2.8 / +2.5 %
        "squeezenet11_fire_b64": (1772.0, 1805.1, 1805.8),  # +1.9 / +1.9 %
        "vit_tiny_cifar_train_adamw_b64": (1175.7, 1169.7, 1171.6),  # −0.5 / −0.4 %
    },
    # the first H200 recordings since holdout48 (every device request between named an H200,
    # H100s came): written at 14c44b1, blind, two processes of one lease (the rerun seven of
    # eight, the device time ran out before NASNet; its rerun came on the next H200 lease)
    "holdout63": {
        # +1.6 / +1.5 %
        "barlow_twins_resnet18_cifar10_lars_gradscaler_fp16_one_stream_b32": (
            5559.9,
            5646.0,
            5643.3,
        ),
        "dscnn_l_kws_pinned_mfcc_h2d_fp16_one_stream_b1024": (5651.2, 5725.1, 5727.0),  # +1.3 %
        # −0.1 / −0.1 %
        "fixmatch_wrn28_2_cifar10_sgd_nesterov_ema_train_bf16_one_stream_b8": (
            6962.0,
            6956.1,
            6957.4,
        ),
        "mobileone_s1_train_time_branches_fp16_3streams_b16": (1883.6, 1896.4, 1895.5),  # +0.7 %
        "nasnet_a_mobile_separable_branches_bf16_2streams_b4": (2728.6, 2831.7, 2831.7),  # +3.8 %
        "ple_two_level_cgc_experts_fp32_3streams_b2048": (388.0, 358.8, 361.8),  # −7.5 / −6.8 %
        "poolformer_s12_imagenet_bf16_one_stream_b32": (3769.4, 3865.1, 3864.7),  # +2.5 / +2.5 %
        "wav2letter_librispeech_mfcc_conv_fp32_one_stream_b8": (3261.9, 3253.3, 3254.2),  # −0.3 %
    },
    "holdout63_rerun": {
        # +2.1 / +2.1 %
        "barlow_twins_resnet18_cifar10_lars_gradscaler_fp16_one_stream_b32": (
            5535.8,
            5651.0,
            5652.3,
        ),
        "dscnn_l_kws_pinned_mfcc_h2d_fp16_one_stream_b1024": (5673.4, 5719.6, 5720.3),  # +0.8 %
        # −0.9 / −0.9 %
        "fixmatch_wrn28_2_cifar10_sgd_nesterov_ema_train_bf16_one_stream_b8": (
            7022.9,
            6956.4,
            6955.8,
        ),
        "mobileone_s1_train_time_branches_fp16_3streams_b16": (1884.6, 1897.5, 1896.4),  # +0.7 %
        # recorded on the next lease (holdout64's), 2026-12-06 22:18 UTC
        "nasnet_a_mobile_separable_branches_bf16_2streams_b4": (2707.6, 2851.1, 2851.8),  # +5.3 %
        "ple_two_level_cgc_experts_fp32_3streams_b2048": (383.9, 357.4, 356.4),  # −6.9 / −7.1 %
        "poolformer_s12_imagenet_bf16_one_stream_b32": (3761.3, 3858.1, 3860.0),  # +2.6 / +2.6 %
        "wav2letter_librispeech_mfcc_conv_fp32_one_stream_b8": (3261.6, 3259.7, 3260.7),  # −0.0 %
    },
    # holdout62's eighth, PANNs, on the same lease (its seven others on an H100)
    "holdout62": {
        # +3.2 / +3.2 %
        "panns_wavegram_beside_logmel_cnn14_bf16_2streams_b8": (3317.4, 3422.4, 3424.9),
    },
    # written at b0f7c22 for the kinds of step the model had predicted least well (cuDNN fp32
    # RNNs, a foreach optimizer update, dense multi-task heads, many small inputs, short kernels
    # on side streams, copies from pinned host memory) and two more, blind, recorded on one H200
    # lease on 2026-12-06, 22:11-22:33 UTC, twice
    "holdout64": {
        "cautious_lion_mlp_mixer_s16_clip_ema_update_fp32_one_stream": (2258.1, 2249.1, 2248.8),
        "desed_crnn_sed_glu_cnn_bigru2_fp32_one_stream_b24": (24023.5, 24053.5, 24053.2),
        # −1.2 / −1.1 %
        "inan_tied_lstm_ptb_augmented_loss_adam_train_fp32_one_stream_b20": (
            5240.2,
            5179.6,
            5179.8,
        ),
        "lite_hrnet18_coco_pose_ccw_branches_fp16_3streams_b16": (5226.3, 5284.7, 5285.7),
        "masknet_parallel_instance_mask_30fields_fp32_one_stream_b2048": (942.0, 945.6, 924.8),
        # +4.6 / +4.7 %
        "maxvit_t_block_grid_relpos_attention_imagenet_fp16_one_stream_b8": (
            4967.6,
            5197.9,
            5198.6,
        ),
        # +2.1 / +2.2 %
        "nyud_mtl_resnet18_seg_depth_normals_edge_heads_bf16_one_stream_b2": (
            2243.2,
            2291.3,
            2291.6,
        ),
        # +4.9 / +4.2 %
        "rma_a1_adaptation_conv1d_base_policy_pinned_obs_h2d_fp32_one_stream_b64": (
            166.5,
            174.6,
            173.6,
        ),
    },
    "holdout64_rerun": {
        "cautious_lion_mlp_mixer_s16_clip_ema_update_fp32_one_stream": (2261.2, 2250.5, 2250.6),
        "desed_crnn_sed_glu_cnn_bigru2_fp32_one_stream_b24": (23982.3, 24029.5, 24031.8),
        # −4.2 / −4.2 %
        "inan_tied_lstm_ptb_augmented_loss_adam_train_fp32_one_stream_b20": (
            5241.6,
            5023.3,
            5021.5,
        ),
        "lite_hrnet18_coco_pose_ccw_branches_fp16_3streams_b16": (5212.7, 5278.2, 5279.4),
        "masknet_parallel_instance_mask_30fields_fp32_one_stream_b2048": (816.5, 832.2, 847.1),
        # +4.8 / +4.8 %
        "maxvit_t_block_grid_relpos_attention_imagenet_fp16_one_stream_b8": (
            4961.3,
            5198.6,
            5199.1,
        ),
        # +2.3 / +2.3 %
        "nyud_mtl_resnet18_seg_depth_normals_edge_heads_bf16_one_stream_b2": (
            2238.6,
            2289.5,
            2290.3,
        ),
        # +3.5 / +5.2 %
        "rma_a1_adaptation_conv1d_base_policy_pinned_obs_h2d_fp32_one_stream_b64": (
            160.9,
            166.6,
            169.4,
        ),
    },
}
#: The sets of the model before the built-in copy cost was set from their probes.
PROBED_BEFORE = ("holdout17", "holdout17_rerun", "probe_rerecord", "probe_rerecord_rerun")


def test_every_probe_recording_carries_its_probes() -> None:
    for recording, expected in EXPECTED.items():
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert {w.name for w in workloads} == set(expected)
        for w in workloads:
            assert w.host_costs is not None
            first, warm = w.host_costs
            # holdout20's machine copied fastest: 4.4-4.8 µs, half the built-in 9.2;
            # holdout25's slowest: 10.9 µs warm, 12.0 µs first after a synchronize;
            # holdout28_rerun's Muon step 12.6 µs first; holdout29_rerun's Informer layers
            # 11.6 µs warm, 13.4 µs first
            assert 4_000 <= warm <= 12_000 and 4_000 <= first <= 14_000, (recording, w.name)


@pytest.mark.parametrize(
    ("recording", "name"), [(s, n) for s, by_name in EXPECTED.items() for n in sorted(by_name)]
)
def test_probe_set_prediction(recording: str, name: str) -> None:
    assert_probe_prediction(recording, name, EXPECTED[recording][name])


@pytest.mark.parametrize(
    ("probe", "within", "median_error", "inside"),
    [
        # with the copy cost the probe measured: the misses are the nine-input recommender
        # (+13.7 %), the Siamese towers on the second machine (−13.7 %) and the eight-input
        # CTR model on the first (+19.0 %; its timing rounds spread ±11 %); the side-stream
        # dequantization too (+21.9 %) until a run of event records paired with the waits
        # after it; DCN-v2's replay too (−17.6 and −18.9 %, 26 of 32,
        # median 4.1 %) until a GEMM packed onto the SMs left free ran slower in the schedule;
        # the expert-choice MoE since a kernel of several waves makes room in its last wave
        # (−13.2 %, −9.2 % before: the replay ran its routing after the shared expert; −11.3 %
        # since light kernels start on partial room), and since then the concurrency
        # pipeline (−10.4 %) where the dequantization came in (+11.7 → +2.5 % from the trace);
        # the Siamese towers came within once a light kernel beside another stream's was
        # charged LIGHT_BESIDE_NS (27 of 32 before, median 3.3 %)
        (True, 28, 0.0309, 32),
        # from the trace alone, each copy at the built-in 9.2 µs: also the steps fed four to
        # eight inputs on a process whose copies cost 6.3-7.4 µs (23 of 32, 3.7 %, unpacked;
        # 22 before partial room; 23 before LIGHT_BESIDE_NS)
        (False, 24, 0.0425, 32),
    ],
)
def test_probe_sets_summary(probe: bool, within: int, median_error: float, inside: int) -> None:
    all_rows = [r for recording in PROBED_BEFORE for r in recording_rows(recording, probe).values()]
    assert_summary(all_rows, 32, within, median_error, inside)


def test_probe_set_verdicts_agree_with_what_replay_did() -> None:
    """Replay saved 20 % or more on all 64 (holdout9's twelve-input step, 7.9 MB of input
    copies, 58 %): each step reads launch-bound, and no region's verdict contradicts its
    predicted saving."""
    from conftest import step_verdicts_agreeing_with_replay

    blind_sets = (
        "holdout21",
        "holdout22",
        "holdout22_rerun",
        "holdout23",
        "holdout23_rerun",
        "holdout24",
        "holdout24_rerun",
        "holdout25",
        "holdout25_rerun",
        "holdout26",
        "holdout26_rerun",
        "holdout27",
        "holdout28",
        "holdout28_rerun",
        "holdout29",
        "holdout29_rerun",
        "holdout30",
        "holdout31",
        "holdout31_rerun",
        "holdout32",
        "holdout32_rerun",
        "holdout33",
        "holdout33_rerun",
        "holdout34",
        "holdout34_rerun",
        "holdout35",
        "holdout35_rerun",
        "holdout36",
        "holdout37",
        "holdout37_rerun",
        "holdout38",
        "holdout38_rerun",
        "holdout39",
        "holdout39_rerun",
        "holdout40",
        "holdout40_rerun",
        "holdout41",
        "holdout41_rerun",
        "holdout42",
        "holdout42_rerun",
        "holdout43",
        "holdout43_rerun",
        "holdout44",
        "holdout44_rerun",
        "holdout45",
        "holdout45_rerun",
        "holdout46",
        "holdout47",
        "holdout47_rerun",
        "holdout48",
        "holdout48_rerun",
        "holdout62",
        "holdout63",
        "holdout63_rerun",
        "holdout64",
        "holdout64_rerun",
    )
    sets = [s for s in EXPECTED if s not in blind_sets]
    workloads = [w for s in sets for w in validation_workloads(VALIDATION_DIR / s)]
    assert min(w.saving for w in workloads) >= 0.20
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 64}
    # holdout21: replay saved 18 % on the Performer layers (predicted 7 %: compute-bound)
    # and 13 % on the Point Transformer layer (predicted 9 %: compute-bound; 11 % and mixed
    # before a slow profiled host was brought to a typical pace), 26-77 % on the rest
    blind = validation_workloads(VALIDATION_DIR / "holdout21")
    assert step_verdicts_agreeing_with_replay(blind) == {"launch-bound": 5, "compute-bound": 2}
    # holdout22: replay saved 1 % on the probe heads (compute-bound), 29 % on the
    # neighborhood attention and 49-86 % on the rest (launch-bound); on the rerun 13 % on the
    # neighborhood attention (compute-bound, predicted 7 %)
    blind = validation_workloads(VALIDATION_DIR / "holdout22")
    assert step_verdicts_agreeing_with_replay(blind) == {"launch-bound": 6, "compute-bound": 1}
    # the probe heads on the rerun: replay saved 34 %, where the same step's eager p50 was
    # 1,232 µs against the first process's 802 (graphed 814 and 793): the trace reads
    # launch-bound, its saving 21 % (its eager time from the trace 949 µs; mixed at 18 % and
    # 910 µs with the profiler costs fitted on fewer recordings)
    rerun = validation_workloads(VALIDATION_DIR / "holdout22_rerun")
    assert step_verdicts_agreeing_with_replay(rerun) == {"launch-bound": 6, "compute-bound": 1}
    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.parse import load_trace

    # holdout23: replay saved 1-2 % on the bilinear pooling and the GPU augmentation
    # (compute-bound), 23 % on the SSIM loss and 50-74 % on the rest (launch-bound); on the
    # rerun the augmentation saved 21 % (launch-bound) and the SSIM loss 16 %
    for recording, verdicts in (
        ("holdout23", {"launch-bound": 6, "compute-bound": 2}),
        ("holdout23_rerun", {"launch-bound": 6, "compute-bound": 2}),
    ):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == verdicts
    # holdout24: replay saved 17-30 % on the mixture-of-depths layers and 48-92 % on six
    # more (launch-bound); the retention layer 7 % on the rerun (compute-bound, predicted 4 %)
    rerun = validation_workloads(VALIDATION_DIR / "holdout24_rerun")
    assert step_verdicts_agreeing_with_replay(rerun) == {"launch-bound": 7, "compute-bound": 1}
    # and 9.3 % on the first recording, where the trace read mixed (its saving 19 %, its eager
    # time from the trace 389 µs against the 342 µs measured, 335 on the rerun) until its
    # profiled host, launch calls a median 8.0 µs, was brought to a typical pace: 12 %
    # (358 µs), compute-bound
    first = validation_workloads(VALIDATION_DIR / "holdout24")
    assert step_verdicts_agreeing_with_replay(first) == {"launch-bound": 7, "compute-bound": 1}
    retention = next(w for w in first if w.name == "retention_decay_b4")
    assert retention.saving == pytest.approx(0.093, abs=0.001)
    step = diagnose(load_trace(retention.trace)).region(retention.region)
    assert step.estimate is not None
    assert step.estimate.saving_frac == pytest.approx(0.12, abs=0.01)
    # holdout25: replay saved 15-17 % on the three FP32 GEMM chains (compute-bound,
    # predicted -10 and -1 % since long FP32 GEMMs slow each other fully, their eager time
    # from the trace 7-27 % short; 10 and 16 % before), 27-92 % on the rest (launch-bound)
    for recording in ("holdout25", "holdout25_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {
            "launch-bound": 7,
            "compute-bound": 1,
        }
    # holdout26: replay saved 33-46 % on the Chamfer loss and 55-83 % on the rest
    for recording in ("holdout26", "holdout26_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 7}
    # holdout27: replay saved 46-86 %
    workloads = validation_workloads(VALIDATION_DIR / "holdout27")
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 8}
    # holdout28: replay saved 24-88 %; on the rerun 11-86 %, the RNN-T joint's 11 % (24 % on
    # the first recording, its graphed time within 5 % of it: the eager time moved) read mixed.
    # On the first recording the RNN-T joint reads mixed too (predicted 17 %; 25 % and
    # launch-bound before its profiled host, launch calls a median 9.6 µs, was brought to a
    # typical pace), where replay saved 24 %
    assert_one_step_reads(
        "holdout28",
        "rnnt_joint_b4",
        {"launch-bound": 7},
        saving=0.245,
        verdict="mixed",
        predicted=0.17,
    )
    workloads = validation_workloads(VALIDATION_DIR / "holdout28_rerun")
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 6, "mixed": 1}
    # holdout29: replay saved 33-89 % on five (launch-bound) and 3-6 % on EGNN and Informer's
    # layers (compute-bound); it made the AdamW step 24-37 % slower, as the graph copies its
    # 48 gradients in (compute-bound: the step's own kernels take most of its time)
    workloads = validation_workloads(VALIDATION_DIR / "holdout29")
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 5, "compute-bound": 3}
    # on the rerun PatchTST, where replay saved 43 %, reads mixed (predicted 19 %; 27 % and
    # launch-bound before its profiled host, launch calls a median 8.9 µs, was brought to a
    # typical pace): its measured eager p50 moved more than any other step of the set
    assert_one_step_reads(
        "holdout29_rerun",
        "patchtst_b32",
        {"launch-bound": 4, "compute-bound": 3},
        saving=0.426,
        verdict="mixed",
        predicted=0.19,
    )
    # holdout30: replay saved 75-88 % on six (launch-bound), 3 % on the int4 unpacking and 9 %
    # on the segmentation loss (compute-bound)
    workloads = validation_workloads(VALIDATION_DIR / "holdout30")
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 6, "compute-bound": 2}
    # holdout31: replay saved 41-89 % on seven (launch-bound) and 7 % on the GCN over cuSPARSE
    # on the rerun (compute-bound, predicted 0 %)
    rerun = validation_workloads(VALIDATION_DIR / "holdout31_rerun")
    assert step_verdicts_agreeing_with_replay(rerun) == {"launch-bound": 7, "compute-bound": 1}
    # and 7.6 % on the first recording, whose profiled process ran every host call about
    # 2.7x slower than the rerun's (aten::t 15.7 µs against 5.0): the trace read launch-bound,
    # its saving 51 %, where both fresh timing processes measured ~405 µs eager, until a
    # slow profiled host was brought to a typical pace: 13 %, compute-bound
    first = validation_workloads(VALIDATION_DIR / "holdout31")
    assert step_verdicts_agreeing_with_replay(first) == {"launch-bound": 7, "compute-bound": 1}
    gcn = next(w for w in first if w.name == "sparse_gcn_csr_b1")
    assert gcn.saving == pytest.approx(0.076, abs=0.001)
    analysis = diagnose(load_trace(gcn.trace))
    step = analysis.region(gcn.region)
    assert step.estimate is not None
    assert step.estimate.saving_frac == pytest.approx(0.127, abs=0.01)
    # and the trace says its host ran slow (median launch call 13.2 µs), where the rerun's
    # does not
    slow = [w.message for w in analysis.warnings if w.kind == "slow_host"]
    assert len(slow) == 1 and "median 13.2 µs" in slow[0] and "--eager-us" in slow[0]
    rerun_gcn = next(w for w in rerun if w.name == "sparse_gcn_csr_b1")
    assert not [w for w in diagnose(load_trace(rerun_gcn.trace)).warnings if w.kind == "slow_host"]
    # holdout32: replay saved 49-90 % on seven (launch-bound) and 12 % on the GAT layers
    # (compute-bound, predicted 6 %); 16 % on the rerun, where they read mixed (predicted
    # 12 %; 10 % and compute-bound with the profiler costs fitted on fewer recordings, 21 %
    # and launch-bound before a slow profiled host was brought to a typical pace)
    for recording, verdicts in (
        ("holdout32", {"launch-bound": 7, "compute-bound": 1}),
        ("holdout32_rerun", {"launch-bound": 7, "mixed": 1}),
    ):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == verdicts
    # holdout33: replay saved 46 % on the side-stream normalization beside a conv net (29 % on
    # the rerun) and 63-85 % on the rest: launch-bound, all 16
    for recording in ("holdout33", "holdout33_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 8}
    # holdout38: replay saved 9-12 % on FNet, the Hopfield pooling and the TextCNN
    # (compute-bound), 48-88 % on the rest (launch-bound); on the rerun FNet saved 40 %, its
    # eager p50 2,111 µs against the first recording's 1,394 (graphed 1,277 and 1,232): the
    # trace reads compute-bound (predicted 10 %, its eager time from the trace 1,421 µs)
    workloads = validation_workloads(VALIDATION_DIR / "holdout38")
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 5, "compute-bound": 3}
    assert_one_step_reads(
        "holdout38_rerun",
        "fnet_fourier_encoder_b16",
        {"launch-bound": 5, "compute-bound": 2},
        saving=0.395,
        verdict="compute-bound",
        predicted=0.10,
    )
    # holdout39: replay saved 7 % on the spatial-transformer net (compute-bound), 13 % on
    # xDeepFM (mixed), 48-78 % on five (launch-bound); the speech enhancer's magnitude and
    # phase branches saved 30 % and read mixed (predicted 15 %; 25 % and launch-bound on the
    # rerun, where replay saved 32 %)
    assert_one_step_reads(
        "holdout39",
        "speech_enhance_mag_phase_2streams_b4",
        {"launch-bound": 5, "compute-bound": 1, "mixed": 1},
        saving=0.298,
        verdict="mixed",
        predicted=0.15,
    )
    workloads = validation_workloads(VALIDATION_DIR / "holdout39_rerun")
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 6, "compute-bound": 2}
    # holdout42: replay saved 37-89 % on all 16 and every step but one reads launch-bound;
    # the 1-D UNet on the rerun reads mixed (predicted 14 %) where replay saved 37 % (55 % and
    # launch-bound on the first recording, predicted 34 %): its eager time from that trace
    # 24 % low
    workloads = validation_workloads(VALIDATION_DIR / "holdout42")
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 8}
    assert_one_step_reads(
        "holdout42_rerun",
        "unet1d_audio_diffusion_b4",
        {"launch-bound": 7},
        saving=0.371,
        verdict="mixed",
        predicted=0.14,
    )
    # holdout43: replay saved 10-83 %; TF32 birdcall CNN beside a meta-MLP 12 % (compute-bound,
    # predicted 2 %), the rest launch-bound but StyleGAN2's modulated convolutions: replay
    # saved 34 %, the step reads mixed at 16 % (its eager time from the trace 22 % low)
    assert_one_step_reads(
        "holdout43",
        "stylegan2_modconv_synthesis_b8",
        {"launch-bound": 6, "compute-bound": 1},
        saving=0.343,
        verdict="mixed",
        predicted=0.16,
    )
    # holdout43_rerun: replay saved 13-86 %, every step launch-bound but the FP32 hashing
    # towers (27 % saved): the simulated eager run, the towers' GEMMs sharing the device,
    # keeps the GPU busy 93 % of its window and the step reads compute-bound at 18 %
    # (launch-bound before the eager run shared the device), its eager time from the trace
    # 12 % short
    assert_one_step_reads(
        "holdout43_rerun",
        "cross_modal_hashing_fp32_towers_2streams_b512",
        {"launch-bound": 7},
        saving=0.274,
        verdict="compute-bound",
        predicted=0.18,
    )
    # holdout44: replay saved 2-25 % on the five fp32 steps bound by their GEMMs or
    # convolutions (compute-bound), 57-77 % on the small fp32 heads (launch-bound); on the
    # rerun the three wide towers saved 25 % and read compute-bound at 12 % (-1 % before the
    # simulated eager run shared the device), their eager time from the trace 14 % short
    workloads = validation_workloads(VALIDATION_DIR / "holdout44")
    assert step_verdicts_agreeing_with_replay(workloads) == {
        "compute-bound": 5,
        "launch-bound": 1,
    }
    assert_one_step_reads(
        "holdout44_rerun",
        "fp32_wide_mlp_towers_3streams_b256",
        {"compute-bound": 4, "launch-bound": 1},
        saving=0.247,
        verdict="compute-bound",
        predicted=0.09,
    )
    # holdout41: replay saved 5.6-7.3 % on Conv-TasNet and 11-17 % on Reformer's LSH
    # attention (compute-bound, predicted 4-6 %), 29-89 % on the other six (launch-bound)
    for recording in ("holdout41", "holdout41_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {
            "launch-bound": 6,
            "compute-bound": 2,
        }
    # holdout40: replay saved 5.5 and 10.2 % on the hash grid (compute-bound, predicted 3 %),
    # 56-90 % on the other seven (launch-bound)
    for recording in ("holdout40", "holdout40_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {
            "launch-bound": 7,
            "compute-bound": 1,
        }
    # holdout34: replay saved 47-89 % on seven (launch-bound) and 12 and 6 % on TimeSformer's
    # divided attention (compute-bound, predicted 4 and 6 %)
    for recording in ("holdout34", "holdout34_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {
            "launch-bound": 7,
            "compute-bound": 1,
        }
    # holdout35: replay saved 38-88 % on seven (launch-bound) and 14.5 % on DGCNN (compute-bound,
    # predicted 1 %); on the rerun 33-88 % on seven (launch-bound) and 7.9 % on DGCNN, where
    # the trace reads compute-bound (predicted 8 %; mixed at 9 % with the profiler costs
    # fitted on fewer recordings, 13 % before a slow profiled host was brought to a typical
    # pace): its eager time from the trace 3 % high on the rerun (10 % before) and 12 % low
    # on the first recording, whose measured eager p50s were 3,788 and 4,141 µs (graphed
    # 3,489 and 3,540)
    for recording in ("holdout35", "holdout35_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {
            "launch-bound": 7,
            "compute-bound": 1,
        }
    # holdout36: replay saved 57-88 %: launch-bound, all four
    workloads = validation_workloads(VALIDATION_DIR / "holdout36")
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 4}
    # holdout37: replay saved 62-90 % on both recordings: launch-bound, all sixteen
    for recording in ("holdout37", "holdout37_rerun"):
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 8}


@pytest.mark.parametrize(
    ("recording", "probe", "within", "median_error", "worst"),
    [
        # as `traceinspect profile` predicts it, with the copy cost it measured
        ("holdout18", True, 8, 0.0207, 0.0663),
        ("holdout18_rerun", True, 8, 0.0209, 0.0772),
        # from the trace alone: the BERT embeddings fed three index tensors read +13.3 %, where
        # the probes of its process read 6.4-7.0 µs but one (9.4); with the calibration
        # machine's 5.6 µs per copy the focal loss fed four inputs read −13.4 % and the GRU
        # decoder fed five −16.5 % (6 of 8)
        ("holdout18", False, 8, 0.0231, 0.095),
        # on the second machine the BERT embeddings again: +14.5 %, its probes 6.3-6.8 µs but
        # one (9.7)
        ("holdout18_rerun", False, 7, 0.0251, 0.1397),
        # blind: the worst is wav2vec's feature encoder, +5.5 % (+6.2 % from the trace alone)
        ("holdout19", True, 8, 0.015, 0.0554),
        ("holdout19", False, 8, 0.0199, 0.0543),
        # every workload on side streams; the last-wave rule came from its FPN replay (5 and
        # 5 of 8 at its freeze, median 6.7 and 9.4 %, worst +14.6 and +28.8 %); the GRU
        # chains from −13.8 to +3.8 % once matrix kernels side by side slowed each other;
        # the FPN lateral branches +10.8 / +12.4 → +9.0 / +10.6 % once a graph's start
        # nodes started in capture order
        ("holdout20", True, 7, 0.0548, 0.104),
        ("holdout20", False, 7, 0.0645, 0.1204),
        # blind for the last-wave rule (median 1.6 and 2.0 %, worst +7.9 and +8.4 %, the
        # four conv branches) but not for the one-wave release, which moved them to +2.6 %
        ("holdout21", True, 7, 0.0162, 0.0933),
        ("holdout21", False, 7, 0.016, 0.0981),
        # blind for the model of this note: the paired prefetch waits and the one-wave
        # release; from the trace alone the misses are steps fed two to four inputs on
        # processes whose copies probed 5.5-6.3 µs against the built-in 9.2
        ("holdout22", True, 7, 0.0418, 0.0754),
        ("holdout22", False, 7, 0.0627, 0.089),
        ("holdout22_rerun", True, 7, 0.0382, 0.0778),
        ("holdout22_rerun", False, 7, 0.0544, 0.0778),
        # blind as well, no model change since holdout22: the miss is three encoders whose
        # matrix kernels slowed each other in the replay (−26 to −27 % at the freeze, −17 to
        # −20 % since matrix kernels side by side slow each other in the schedule, −19 to
        # −21 % since a graph's start nodes start in capture order, −13 to −16 % since long
        # FP32 GEMMs slow each other fully)
        ("holdout23", True, 8, 0.0312, 0.0485),
        ("holdout23", False, 8, 0.035, 0.0532),
        ("holdout23_rerun", True, 8, 0.0266, 0.0729),
        ("holdout23_rerun", False, 8, 0.0184, 0.0772),
        # blind for the frozen slowdown of matrix kernels side by side (1.0 past 4 µs: 14 and
        # 14 of 16, the two FP32 MLP branches +24 to +26 %), not for the per-kernel fit that
        # replaced it (0.5 past 1 µs, measured before the recording); worst: the KAN stack,
        # +9.3 / +9.8 % on the rerun
        ("holdout24", True, 8, 0.0339, 0.0752),
        ("holdout24", False, 8, 0.0407, 0.0689),
        ("holdout24_rerun", True, 8, 0.0201, 0.0932),
        ("holdout24_rerun", False, 8, 0.0158, 0.0889),
        # blind at its freeze, 7 and 8 of 8: the miss was the three FP32 GEMM chains on the
        # first recording (−20.4 / −20.5 %; −8.6 / −8.9 % on the rerun, whose eager trace
        # overlapped the chains differently); since long FP32 GEMMs slow each other fully,
        # which they led to, −2.9 / −3.0 % and +9.7 / +9.4 %: not blind since. The bf16 conv
        # towers read +6.3 → +10.1 % on the rerun since light kernels streaming memory share
        # its bandwidth (schedule.BANDWIDTH_LATENCY_NS; its replays' graph is not the trace's)
        ("holdout25", True, 7, 0.0298, 0.1367),
        ("holdout25", False, 7, 0.0323, 0.1269),
        ("holdout25_rerun", True, 7, 0.0351, 0.1404),
        ("holdout25_rerun", False, 7, 0.0454, 0.1438),
        # blind for the model it was recorded with: the misses were the convolutions beside
        # small GEMMs (+19 to +27 %: the schedule packed each GEMM onto the few SMs a batch
        # norm left free, 3x as long, and the convolution branch waited for its room; the
        # replay started it after the batch norm) and the two bf16 GEMM towers (−10.3 to
        # −10.6 %). Since a matrix kernel waits for a light kernel's room instead of packing
        # beside it (schedule.PACK_BESIDE_LIGHT_MAX), the convolutions read +5.3 / +10.7 %
        # and +6.4 / +9.3 %, inside their ranges; the GEMM towers −9.7 to −9.9 % since light
        # kernels streaming memory share its bandwidth
        ("holdout26", True, 7, 0.0265, 0.0866),
        ("holdout26", False, 7, 0.0508, 0.0865),
        ("holdout26_rerun", True, 7, 0.0576, 0.087),
        ("holdout26_rerun", False, 7, 0.0569, 0.0847),
        # blind as well: the miss was two cuDNN LSTMs on two streams (+23 %; +5.7 % since a
        # record made inside a library call is read on the stream it launched on last); the
        # mixup + dropout training step reads −10.9 % from the trace alone, −9.9 % with its
        # probes
        ("holdout27", True, 8, 0.0423, 0.0990),
        ("holdout27", False, 7, 0.0474, 0.1091),
        # blind for the model and for the one-wave tail candidate: from the trace alone the
        # MoCo step reads −11.1 % on the first recording (−9.5 % with its probes, −0.0 % on
        # the rerun)
        ("holdout28", True, 8, 0.0278, 0.0901),
        ("holdout28", False, 7, 0.0278, 0.1064),
        ("holdout28_rerun", True, 7, 0.0224, 0.0687),
        ("holdout28_rerun", False, 7, 0.0208, 0.0764),
        # blind, 7 of 8 on each: the miss was the prefill chunk beside a decode batch,
        # both forked onto side streams with nothing after the join (+40 to +46 %, medians
        # 1.9 / 2.0 / 0.9 / 1.9 %); since forks come from the stream that joins them there,
        # −1.1 to +3.0 %. The prefill and decode step on the first recording reads +10.6 / +10.4 %
        # since light kernels streaming memory share its bandwidth (+9.4 before): its KV-cache
        # concatenations ran 29 µs in the eager trace, 9 µs in the replay
        ("holdout29", True, 7, 0.0263, 0.1222),
        ("holdout29", False, 7, 0.0207, 0.1208),
        ("holdout29_rerun", True, 8, 0.0255, 0.0861),
        ("holdout29_rerun", False, 8, 0.0382, 0.0788),
        # blind for the model as it stands, the fork-origin rules included: 8 of 8, worst the
        # trunk with three heads on side streams, +3.8 % from the trace alone
        ("holdout30", True, 8, 0.018, 0.0337),
        ("holdout30", False, 8, 0.0083, 0.0379),
        # blind for the model as it stands: the miss is CLIP's two towers on two streams
        # (−12.4 to −14.9 %): the image tower's patchify convolution, one wave of 52 blocks,
        # ran 601 µs beside the text tower against 317 alone, and the replay took longer than
        # all the step's kernels one after another (1,027 against 958 µs)
        ("holdout31", True, 7, 0.0163, 0.1114),
        ("holdout31", False, 7, 0.0193, 0.1126),
        ("holdout31_rerun", True, 7, 0.0089, 0.1291),
        ("holdout31_rerun", False, 7, 0.0092, 0.1322),
        # blind as well: the miss is a patchify convolution beside an MLP on two streams,
        # the other way (+20.2 to +22.8 %): in the replay the convolution (104 blocks, 84 µs
        # alone) ran 186 µs while every MLP GEMM ran beside it on the same SMs; the schedule,
        # whose device shares add up per kernel, has the GEMMs wait for room
        ("holdout32", True, 8, 0.0184, 0.0991),
        ("holdout32", False, 7, 0.021, 0.1116),
        ("holdout32_rerun", True, 8, 0.0271, 0.0869),
        ("holdout32_rerun", False, 8, 0.0312, 0.0853),
        # blind as well, 8 of 8 on each: the worst is the MLP training step under autocast on
        # the rerun, −6.4 / −6.5 %; the one side-stream step within 2.2 %
        ("holdout33", True, 8, 0.019, 0.0323),
        ("holdout33", False, 8, 0.0205, 0.0444),
        ("holdout33_rerun", True, 8, 0.0233, 0.0639),
        ("holdout33_rerun", False, 8, 0.0263, 0.065),
        # blind as well, 7 of 8 on each: the miss was segmentation and depth heads on two side
        # streams with a fused output after the join (+24.1 to +24.6 %, below its range): one
        # of their eager kernels ran 1.8x its replay time; 8 of 8 since a fork's later twin
        # is charged its earlier twin's time (the test on holdout34's miss)
        ("holdout34", True, 8, 0.0206, 0.061),
        ("holdout34", False, 8, 0.0243, 0.0708),
        ("holdout34_rerun", True, 8, 0.0177, 0.066),
        ("holdout34_rerun", False, 8, 0.0181, 0.0657),
        # blind as well, 7 of 8 on each: from the trace alone the miss is three heads on three
        # streams fed four inputs (+14.7 / +11.7 %; +3.7 % with its probes' 6.7-7.2 µs per
        # copy against the built-in 9.2); with the probes, a GNN beside a SMILES encoder on two
        # streams (−10.5 / −10.3 %; −8.0 / −8.5 % from the trace alone)
        ("holdout35", True, 8, 0.0321, 0.0701),
        ("holdout35", False, 7, 0.0327, 0.1536),
        ("holdout35_rerun", True, 8, 0.0458, 0.0673),
        ("holdout35_rerun", False, 7, 0.0520, 0.1231),
        # blind for the model as it stands, the host's pace included: 4 of 4
        ("holdout36", True, 4, 0.0215, 0.0425),
        ("holdout36", False, 4, 0.0246, 0.0339),
        # blind for the copies charged at the host's pace: 8 of 8 on each recording; the
        # worst, the FastSpeech 2 variance adaptor on the rerun (+8.9 %), fed five inputs
        ("holdout37", True, 8, 0.0176, 0.0701),
        ("holdout37", False, 8, 0.0243, 0.0819),
        ("holdout37_rerun", True, 8, 0.0165, 0.0833),
        ("holdout37_rerun", False, 8, 0.0152, 0.0891),
        # blind, 8 of 8 on each: the three on side streams with work after each join
        # (SlowFast, SiamRPN, HRNet) among them, HRNet the worst (−9.6 / −9.3 % from the trace)
        ("holdout38", True, 8, 0.0229, 0.0574),
        ("holdout38", False, 8, 0.0252, 0.0546),
        ("holdout38_rerun", True, 8, 0.0148, 0.0404),
        ("holdout38_rerun", False, 8, 0.0129, 0.0399),
        # blind, 8 of 8 on each: the four whose side-stream branches differ in kind (a conv
        # branch beside GEMMs, embedding bags beside a CNN) within 2.1 %
        ("holdout39", True, 8, 0.0141, 0.0652),
        ("holdout39", False, 8, 0.0144, 0.0685),
        ("holdout39_rerun", True, 8, 0.0125, 0.0839),
        ("holdout39_rerun", False, 8, 0.0144, 0.0867),
        # blind, 8 of 8 on each: the three on two side streams within 3.1 %, the worst
        # DenseNet's dense blocks on the rerun (−4.9 / −5.1 %)
        ("holdout40", True, 8, 0.02, 0.0465),
        ("holdout40", False, 8, 0.0223, 0.0455),
        ("holdout40_rerun", True, 8, 0.0168, 0.0852),
        ("holdout40_rerun", False, 8, 0.0281, 0.0854),
        # blind at its freeze, 7 of 8 on each: the miss the OCR step (+11.7 / +14.0 % from the
        # trace), a CRNN's bidirectional GRU beside a text detector, whose two directions were
        # chained by timing coincidences; 8 of 8 since that change, which it led to
        ("holdout41", True, 8, 0.0199, 0.0355),
        ("holdout41", False, 8, 0.0209, 0.0446),
        ("holdout41_rerun", True, 8, 0.0302, 0.0779),
        ("holdout41_rerun", False, 8, 0.0255, 0.0807),
        # blind for that change, 6 and 5 of 8: three steps with bidirectional LSTMs or a GRU on
        # side streams miss (below); 6 and 6 since cuDNN's own waits read their records'
        # streams: the GRU within, the two BiLSTMs shorter
        ("holdout42", True, 7, 0.0364, 0.1004),
        ("holdout42", False, 7, 0.0362, 0.1083),
        ("holdout42_rerun", True, 8, 0.0517, 0.0981),
        ("holdout42_rerun", False, 7, 0.0544, 0.1076),
        # blind for the refitted profiler costs and both schedule rules before it, 7 of 8: FP32
        # hashing towers on two streams missed (−12.6 / −11.2 %, the "FP32 towers read
        # short"); +2.5 / +3.9 % since long FP32 GEMMs slow each other fully, which they led
        # to: not blind since
        ("holdout43", True, 8, 0.0235, 0.0439),
        ("holdout43", False, 8, 0.0303, 0.0442),
        # recorded after that rule, blind for it: the miss the three-stream document layout
        # (−10.7 / −11.3 %; −9.2 / −9.9 % since light kernels streaming memory share its
        # bandwidth); the hashing towers +2.3 / +1.7 % (−9.8 / −10.4 % without the rule)
        ("holdout43_rerun", True, 8, 0.0218, 0.0774),
        ("holdout43_rerun", False, 8, 0.0211, 0.0838),
        # fp32 workloads written to test that rule and recorded after it, blind: 6 of 6 and
        # 5 of 6 (4 and 3 without it: the conv branches −20.7 and −17.0 %, the wide towers
        # −18.3 %, the siamese towers +9.9 and +11.5 %); the miss the small fp32 heads on the
        # rerun (+13.5 %), whose two recordings' graphed p50s differ by 13 %
        ("holdout44", True, 6, 0.0296, 0.0950),
        ("holdout44", False, 6, 0.0239, 0.0958),
        ("holdout44_rerun", True, 5, 0.0473, 0.1415),
        ("holdout44_rerun", False, 5, 0.0481, 0.1429),
        # written before the model froze and recorded on an H100 first, then on an H200 with
        # the model unchanged: 7 of 8 on each recording; the fp32 GRU misses (+39.5 / +23.4 %,
        # above its range), as on the H100 (+35 / +36 %)
        ("holdout45", True, 7, 0.0234, 0.2341),
        ("holdout45", False, 7, 0.0287, 0.2332),
        ("holdout45_rerun", True, 7, 0.0151, 0.1964),
        ("holdout45_rerun", False, 7, 0.0271, 0.1945),
        # recorded on an H100 first, then on an H200 with the model unchanged: the 3-layer
        # cuDNN LSTM misses as there (+15.3 / +14.7 %, +12.9 % on the H100), above its range
        # until the range's low end read cuDNN's layers handed over a chunk earlier
        ("holdout46", True, 8, 0.0218, 0.0662),
        ("holdout46", False, 8, 0.0256, 0.0604),
        # written after holdout46 was recorded on the H200, eight families the set lacked:
        # every one within ±10 % on both recordings
        ("holdout47", True, 8, 0.0232, 0.0417),
        ("holdout47", False, 8, 0.0237, 0.0527),
        ("holdout47_rerun", True, 8, 0.0185, 0.0579),
        ("holdout47_rerun", False, 8, 0.0176, 0.0591),
        # written after holdout47 was recorded: every one within ±10 % from the trace alone;
        # the ComplEx ranking's two branches read short (−9.5 / −9.1 %, −10.1 % on the rerun
        # with its probes), at the top of their range; −7.6 / −7.6 % and −8.3 / −7.3 % since
        # light kernels streaming memory share its bandwidth
        ("holdout48", True, 8, 0.0289, 0.0896),
        ("holdout48", False, 8, 0.0328, 0.0915),
        ("holdout48_rerun", True, 8, 0.0148, 0.0748),
        ("holdout48_rerun", False, 8, 0.0142, 0.0647),
        # written at 14c44b1 to judge blind the kinds of step the model reads least well
        # (side streams of short kernels, optimizer-heavy training steps, a copy from pinned
        # host memory inside the step) and recorded on an H200, the first since holdout48:
        # every one within ±10 %, PLE's three streams of small fp32 experts the worst
        ("holdout63", True, 8, 0.0143, 0.0752),
        ("holdout63", False, 8, 0.0142, 0.0675),
        ("holdout63_rerun", True, 8, 0.0152, 0.0690),
        ("holdout63_rerun", False, 8, 0.0152, 0.0715),
        ("holdout62", True, 1, 0.0317, 0.0317),
        ("holdout62", False, 1, 0.0324, 0.0324),
        # written at b0f7c22 for the kinds of step the model had read least well (cuDNN fp32
        # GRU and LSTM, a cautious Lion update, four dense heads, 31 small inputs, Lite-HRNet's
        # side streams, six pinned copies) and MaxViT-T, the worst at +4.7 / +4.8 %
        ("holdout64", True, 8, 0.0114, 0.0488),
        ("holdout64", False, 8, 0.0149, 0.0465),
        ("holdout64_rerun", True, 8, 0.0210, 0.0478),
        ("holdout64_rerun", False, 8, 0.0303, 0.0524),
    ],
)
def test_the_blind_set_after_the_copy_cost(
    recording: str, probe: bool, within: int, median_error: float, worst: float
) -> None:
    rows = recording_rows(recording, probe)
    errors = [abs(r.error_frac) for r in rows.values()]
    assert sum(e <= 0.10 for e in errors) == within
    assert statistics.median(errors) == pytest.approx(median_error, abs=0.001)
    assert max(errors) == pytest.approx(worst, abs=0.001)
    # measured below the range: holdout20's FPN neck from the trace alone until each input
    # copy was charged at its host's pace (its vision-text towers and holdout21's four conv
    # branches too until a kernel of one wave made room at 80 or 90 % of its run;
    # holdout25's FP32 GEMM chains, holdout43's FP32 hashing towers with the probes and the
    # three encoders of holdout23_rerun until long FP32 GEMMs slowed each other fully)
    # (holdout23's three encoders, holdout32's convolution beside a GEMM with the probes,
    # holdout44's wide FP32 MLP towers and holdout45_rerun's GRU came inside once the range
    # carried the multi-stream schedule's own error, SCHEDULE_LOW_FRAC / SCHEDULE_HIGH_FRAC)
    outside: dict[tuple[str, bool], set[str]] = {}
    for mode in (True, False):
        outside["holdout31_rerun", mode] = {"clip_towers_2streams_b32"}
        outside["holdout44", mode] = {"fp32_conv_branches_2streams_b16"}
        # (the rerun's too since the prediction reads cuDNN's hand-overs half way: its
        # schedule error below reaches 1,078 µs, measured 1,060)
        for gru in ("holdout45", "holdout45_rerun"):
            outside[gru, mode] = {"gru_fp32_one_stream_b16"}
    # (holdout34's heads came inside once a fork's later twin ran as its earlier twin)
    # the rerun came inside once light kernels were charged beside other streams'
    outside["holdout32", False] = {"conv_beside_gemm_2streams_b8"}
    outside["holdout44_rerun", True] = {"fp32_small_heads_2streams_b64"}
    # (ComplEx from the trace alone came inside with LIGHT_BESIDE_NS, with the rerun's probes
    # once light kernels streaming memory shared its bandwidth)
    inside = {n for n, r in rows.items() if not r.graphed_inside}
    assert inside == outside.get((recording, probe), set())


def test_a_replay_that_draws_other_random_numbers_is_not_called_a_capture_failure() -> None:
    """holdout26's MAE encoder draws ``torch.rand`` in its step: it captured (2.1 ms) and
    replayed in 134.5 µs against 648.5 eager, but its outputs differed from eager's (max
    |error| 7.06 at bf16 tolerance; the check drew the two apart then), so it was not to be
    enabled, and not for a capture failure."""
    import json

    from traceinspect.analysis.decision import decide_candidates

    results = json.loads(
        (VALIDATION_DIR / "holdout26" / "mae_masked_encoder_b16" / "results.json").read_text()
    )
    graphed = next(r for r in results["rows"] if r["mode"] == "graphed")
    assert graphed["status"] == "incorrect" and graphed["capture_ns"] == 2_083_837
    (decision,) = decide_candidates(results)
    assert decision.choice == "do not enable"
    (reason,) = decision.reasons
    assert reason.startswith("replayed outputs differ from eager (bucket 16, max |error| 7.06)")
    assert "random numbers" in reason


def test_a_step_that_drifts_is_checked_against_the_eager_call_after_its_replay() -> None:
    """holdout31's spectral-norm discriminator moves its power-iteration vectors on every
    call: its two eager references differ by 7.8e-6 (within float32's tolerance), its replay
    55 steps later by 3.2e-5 from the first, and the first recordings read it incorrect.
    Recorded again, the replay was 1.2e-5 from an eager call right after it, within twice
    the 7.5e-6 that call and the next one differ by: checked, correct, enabled."""
    import json

    from traceinspect.analysis.decision import decide_candidates

    for recording in ("holdout31", "holdout31_rerun"):
        results = json.loads(
            (VALIDATION_DIR / recording / "spectral_norm_disc_b16" / "results.json").read_text()
        )
        eager, graphed = results["rows"]
        assert (eager["repeatable"], eager["repeat_max_abs_error"]) == (True, 7.828697562217712e-06)
        assert (graphed["status"], graphed["correct"]) == ("ok", True)
        assert graphed["checked_against"] == "eager_after_replay"
        assert graphed["max_abs_error"] == pytest.approx(1.24e-5, abs=0.01e-5)
        assert graphed["tolerance"].endswith("or 2 x one eager step's drift (7.5e-06)")
        (decision,) = decide_candidates(results)
        assert decision.choice == "enable"


def test_the_gemms_beside_the_convolution_started_without_room_and_ran_in_two_waves() -> None:
    """holdout32's miss, measured in its replay (``bench/overfull_starts.py``): the MLP's
    GEMMs (one 225-232 KB block per SM) started beside the patchify convolution although
    their device share and the convolution's add up to more than 1, and ran 1.6-1.9x their
    time alone on the 0.61 of the device it left (24 of 26 starts over five steps, two
    2.3-2.5x); the schedule has them wait."""
    from overfull_starts import starts

    rows = starts(VALIDATION_DIR / "holdout32" / "conv_beside_gemm_2streams_b8")
    kinds = statistics.multimode(r.kind for r in rows)
    assert len(rows) == 68 and sorted(kinds) == ["light", "matrix-1"]
    beside = [
        r.ratio for r in rows if r.kind == "matrix-1" and r.free == pytest.approx(0.606, abs=0.001)
    ]
    assert len(beside) == 26
    assert statistics.median(beside) == pytest.approx(1.74, abs=0.01)
    assert sum(1.6 <= x <= 1.9 for x in beside) == 24
    # Run by the room left (0.606 of the device for a share of 0.97-1.0), they would take
    # 2.15x; ignoring the room, 1.34x (the convolution beside them slows them); at the room's
    # fourth root, what reads the 12,090 over-full starts of every replay best, 1.51x.
    gemms = [r for r in rows if r.kind == "matrix-1" and r.free == pytest.approx(0.606, abs=1e-3)]
    for gamma, ratio in ((1.0, 2.15), (0.0, 1.34), (0.25, 1.51)):
        assert statistics.median(r.paced_ratio(gamma) for r in gemms) == pytest.approx(
            ratio, abs=0.01
        )
    # and they did not wait: of the 40 kernels of one block per SM due (their stream
    # predecessor ended) without room beside the convolution, 33 started within 1.5 µs
    from overfull_starts import due_waits

    due = [
        w
        for kind, room, w in due_waits(
            VALIDATION_DIR / "holdout32" / "conv_beside_gemm_2streams_b8"
        )
        if kind == "matrix-1" and room != "room"
    ]
    assert len(due) == 40 and sum(w < 1_500 for w in due) == 33


def test_a_step_on_several_streams_says_the_estimate_is_least_sure_there() -> None:
    """holdout32's convolution beside an MLP on two streams read +22.8 % from the trace: its
    decision says kernels of several streams side by side are what the estimate models least
    well; its one-stream TCN's does not."""
    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.parse import load_trace

    def reasons(name: str) -> tuple[str, ...]:
        w = _workload("holdout32", name)
        return diagnose(load_trace(w.trace)).region(w.region).decision.reasons

    (said,) = [r for r in reasons("conv_beside_gemm_2streams_b8") if "least well" in r]
    assert said.startswith("its graph runs kernels of 3 streams side by side")
    assert not [r for r in reasons("tcn_dilated_b16") if "least well" in r]


def test_the_streams_cudnn_forks_for_itself_are_told_from_the_programs() -> None:
    """holdout45's GRU runs on one stream of the program's, yet its step spans five: cuDNN
    forks the two layers' recurrences and input projections onto four streams of its own
    inside ``aten::_cudnn_rnn``. The estimate counts them apart, and the several-streams
    caveat says whose they are; the LSTM beside an MLP adds the program's two side streams
    to cuDNN's four; three dense heads on streams the program opened fork none."""
    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.parse import load_trace

    def step(recording: str, name: str) -> Any:
        w = _workload(recording, name)
        return diagnose(load_trace(w.trace)).region(w.region)

    gru = step("holdout45", "gru_fp32_one_stream_b16")
    assert gru.estimate is not None
    assert (gru.estimate.streams, gru.estimate.forked_streams) == (5, 4)
    assert gru.estimate.forking_operators == ("aten::_cudnn_rnn",)
    assert gru.estimate.to_json()["graph"]["forking_operators"] == ["aten::_cudnn_rnn"]
    (said,) = [r for r in gru.decision.reasons if "least well" in r]
    assert said.startswith(
        "its graph runs kernels of 5 streams (4 of them forked inside aten::_cudnn_rnn) "
        "side by side"
    )
    lstm = step("holdout45", "lstm_beside_mlp_2streams_b32").estimate
    assert lstm is not None and (lstm.streams, lstm.forked_streams) == (7, 4)
    heads = step("holdout45", "three_dense_heads_shared_feats_3streams_b2").estimate
    assert heads is not None and (heads.streams, heads.forked_streams) == (4, 0)
    assert heads.forking_operators == ()


def test_the_heads_miss_was_one_eager_kernel_that_read_its_input_cold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """holdout34's miss (+25 % on both recordings) was not the schedule of the two heads: it
    was one kernel of the eager trace. Both heads open with the same bilinear upsampling of
    the same encoder features, a kernel of one block. The segmentation head's ran 213-217 µs
    in every profiled eager step; the depth head's, launched some 600 µs of other work later
    and with nothing beside it, 387-393 µs (its input no longer in L2); in the replay the two
    ran side by side right after the encoder, 212-215 µs each. The later twin at a program's
    fork is now charged its earlier twin's time (``twins.warm_fork_twins``): +4.0 and +3.6 %,
    inside the range. cuDNN's multi-layer GRU, whose streams a library call forks, is left
    as traced.
    What the replay's heads did beside each other (``bench/overfull_starts.py``: 121 starts
    without room, a median 1.09x and 1.36x their time alone), first taken for the cause, the
    schedule reads well enough once that one kernel's time is right."""
    from overfull_starts import starts
    from validation_table import prepare

    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.analysis.estimate import twins
    from traceinspect.calibration import calibration_for
    from traceinspect.parse import load_trace

    folder = VALIDATION_DIR / "holdout34" / "seg_depth_heads_2streams_b4"
    rows = starts(folder)
    assert len(rows) == 121
    single: dict[str, list[float]] = {}
    for trace in ("step.b4.eager.json.gz", "step.b4.graphed.json.gz"):
        gpu = load_trace(folder / trace).gpu
        one = gpu[gpu["name"].str.contains("upsample_bilinear2d") & (gpu["grid"] == "1,1,1")]
        single[trace] = sorted(((one["end_ns"] - one["start_ns"]) / 1000).tolist())
    eager, graphed = single["step.b4.eager.json.gz"], single["step.b4.graphed.json.gz"]
    assert len(eager) == len(graphed) == 10  # two per step, five steps
    assert 213 < eager[0] and eager[4] < 217 and 386 < eager[5] and eager[-1] < 394
    assert 211 < graphed[0] and graphed[-1] < 216

    def error(recording: str, name: str) -> float:
        w = _workload(recording, name)
        prepared = prepare(replace(w, host_costs=None))
        est = prepared.estimate(calibration_for(prepared.timeline))
        return float(est.graphed_ns / 1000 / w.graphed_us - 1)

    heads = "seg_depth_heads_2streams_b4"
    warm = {r: error(r, heads) for r in ("holdout34", "holdout34_rerun")}
    gru = {r: error(r, "gru_fp32_one_stream_b16") for r in ("holdout45", "holdout45_rerun")}
    assert warm == pytest.approx({"holdout34": 0.040, "holdout34_rerun": 0.036}, abs=0.002)
    monkeypatch.setattr(twins, "WARM_TWIN_RATIO", float("inf"))
    cold = {r: error(r, heads) for r in ("holdout34", "holdout34_rerun")}
    assert cold == pytest.approx({"holdout34": 0.259, "holdout34_rerun": 0.253}, abs=0.002)
    # cuDNN's layers on its own streams: twins by signature, other work; left as traced
    assert gru == {r: error(r, "gru_fp32_one_stream_b16") for r in gru}
    # the decision still warns that several streams are where the model reads least well
    monkeypatch.undo()
    reasons = diagnose(load_trace(folder / "step.b4.eager.json.gz")).region("step").decision.reasons
    assert [r for r in reasons if r.startswith("its graph runs kernels of 3 streams side by side")]


def test_the_first_set_after_the_host_pace_rule_reads_its_savings_within_15_points() -> None:
    """holdout36, recorded once the eager model brought a slow profiled host to a typical
    pace: every launch call of that lease was slow (a median 9.3-10.8 µs per trace), and the
    rule read every saving within 15 points (median 5.0) but overcorrected the eager times
    (−26 to +23 %, median |error| 22 %; +1 to +58 %, median 17 %, without the rule): a slow
    machine, not only a slow profiled process, slows its unprofiled runs too."""
    rows = recording_rows("holdout36", False)
    points = sorted(abs(r.saving_error_points) for r in rows.values())
    assert len(points) == 4 and points[-1] <= 15
    assert statistics.median(points) == pytest.approx(5.0, abs=0.2)
    eager = sorted(r.eager_error_frac for r in rows.values())
    assert eager[0] == pytest.approx(-0.26, abs=0.01) and eager[-1] == pytest.approx(0.23, abs=0.01)


def _workload(recording: str, name: str) -> Any:
    """The workload ``name`` of ``sample_traces/validation/RECORDING``."""
    (w,) = [w for w in validation_workloads(VALIDATION_DIR / recording) if w.name == name]
    return w


def _step_occurrence(recording: str, name: str, occurrence: int) -> tuple[Any, Any, Any]:
    """The trace of ``recording``'s workload ``name``, its columns, and the GPU rows of the
    step's ``occurrence``-th occurrence in start order (as the estimate takes them)."""
    from traceinspect.analysis.arrays import index_timeline
    from traceinspect.analysis.estimate import TimelineColumns
    from traceinspect.analysis.regions import find_regions
    from traceinspect.parse import load_trace

    w = _workload(recording, name)
    timeline = load_trace(w.trace)
    cols = TimelineColumns(timeline)
    (step,) = [r for r in find_regions(timeline, index_timeline(timeline)) if r.name == w.region]
    rows = np.asarray(step.rows[occurrence])
    return timeline, cols, rows[np.argsort(cols.gpu("start_ns")[rows], kind="stable")]


def _lease_pair_rows(recording: str) -> dict[str, Any]:
    """The rows, from the trace alone, of ``recording`` and its rerun (eight workloads each),
    named ``SET/WORKLOAD``."""
    rows = {
        f"{r}/{name}": row
        for r in (recording, f"{recording}_rerun")
        for name, row in recording_rows(r, False).items()
    }
    assert len(rows) == 16
    return rows


def _lease_pair_workloads(recording: str) -> list[Any]:
    """The measured workloads of ``recording`` and of its rerun."""
    return [
        w
        for r in (recording, f"{recording}_rerun")
        for w in validation_workloads(VALIDATION_DIR / r)
    ]


def _lease_pair_all_within(recording: str) -> dict[str, Any]:
    """:func:`_lease_pair_rows`, asserting that every graphed time is within ±10 % and inside
    its range."""
    rows = _lease_pair_rows(recording)
    assert all(abs(r.error_frac) <= 0.10 and r.graphed_inside for r in rows.values())
    return rows


def _saving_misses(rows: dict[str, Any]) -> set[str]:
    """The rows whose saving reads more than 15 points off the measured one."""
    return {n for n, r in rows.items() if abs(r.saving_error_points) > 15}


def test_the_first_set_after_the_copy_pace_rule() -> None:
    """holdout37, recorded twice on one lease once each input copy was charged at the pace of
    the trace's host: every graphed time within ±10 % and inside its range from the trace
    alone (median |error| 2.4 % and 1.5 %; 2.1 % and 1.6 % with the built-in copy cost for
    every host: this lease's probes read 6.7-11.4 µs per copy, most of them over the
    built-in 9.2, so the rule charged a few copies too little). The savings are where it
    falls short: 13 of 16 within 15 points, the misses all eager times read low (gMLP −58 %,
    Linformer and Slot Attention on the rerun −32 and −34 %): the measured eager p50s of this lease
    moved between rounds by up to 87 % and between the two recordings by up to 2x
    (ShuffleNet V2: 8,766 and 4,475 µs, graphed 887 and 838)."""
    rows = _lease_pair_all_within("holdout37")
    missed = _saving_misses(rows)
    assert missed == {
        "holdout37/gmlp_spatial_gating_b8",
        "holdout37_rerun/linformer_encoder_b8",
        "holdout37_rerun/slot_attention_b16",
    }
    assert all(rows[n].eager_error_frac < -0.3 for n in missed)
    assert rows["holdout37/gmlp_spatial_gating_b8"].eager_error_frac == pytest.approx(
        -0.583, abs=0.005
    )
    shufflenet = [rows[f"{r}/shufflenet_v2_b8"] for r in ("holdout37", "holdout37_rerun")]
    assert [r.eager_measured_us for r in shufflenet] == [8765.9, 4475.0]


def test_the_second_set_after_the_copy_pace_rule() -> None:
    """holdout38, recorded twice on one lease with the model of holdout37: every graphed
    time within ±10 % and inside its range from the trace alone, three steps on two and three
    side streams with work after each join included (HRNet −9.6 and −9.3 %, SlowFast −3.1 and
    −5.1 %, SiamRPN +0.7 and −1.5 %); 15 of 16 savings within 15 points, the miss FNet on the
    rerun (−30 points), whose measured eager p50 was 1.5x the first recording's."""
    rows = _lease_pair_all_within("holdout38")
    missed = _saving_misses(rows)
    assert missed == {"holdout38_rerun/fnet_fourier_encoder_b16"}
    fnet = [rows[f"{r}/fnet_fourier_encoder_b16"] for r in ("holdout38", "holdout38_rerun")]
    assert [r.eager_measured_us for r in fnet] == [1394.3, 2110.9]
    assert fnet[1].saving_error_points == pytest.approx(-30, abs=1)


def test_the_third_set_after_the_copy_pace_rule() -> None:
    """holdout39, recorded twice on one lease with the model of holdout37: every graphed time
    within ±10 % and inside its range from the trace alone (median |error| 1.0 % and 1.3 %),
    the four steps whose side-stream branches differ in kind within 2.2 % (2.1 % at its
    freeze); 15 of 16 savings within 15 points, the miss ECAPA-TDNN on the rerun (+20
    points): its eager time from the
    trace reads 9,993 µs against 4,729 measured (the first recording's trace: 4,982 against
    4,943). Since light kernels streaming memory share its bandwidth, Mask R-CNN's two heads
    read +5.5 and +7.3 % (+0.7 and +2.5 % with a demand read from the device share alone);
    since batch-norm kernels count as streaming and each kernel is slowed by what those
    beside it stream, +6.9 and +8.7 %, and the first recording's speech enhancer's saving
    −15.3 points (−14.9: its eager time from the trace reads 17 % short)."""
    rows = _lease_pair_all_within("holdout39")
    streams = [r for n, r in rows.items() if "streams" in n]
    assert len(streams) == 8 and max(abs(r.error_frac) for r in streams) <= 0.087
    missed = _saving_misses(rows)
    assert missed == {
        "holdout39_rerun/ecapa_tdnn_speaker_b16",
        "holdout39/speech_enhance_mag_phase_2streams_b4",
    }
    ecapa = rows["holdout39_rerun/ecapa_tdnn_speaker_b16"]
    assert (ecapa.eager_estimated_us, ecapa.eager_measured_us) == (9993.3, 4729.1)


def test_the_fourth_set_after_the_copy_pace_rule() -> None:
    """holdout40, recorded twice on one lease with the model of holdout37 (the copy-pace
    rule; nothing in the model changed since): every graphed time within ±10 % and inside
    its range from the trace alone (median |error| 1.6 % and 1.9 %, the worst DenseNet's
    dense blocks at −5.1 %), the three steps on two side streams within 8.3 % (3.1 % until
    light kernels started on partial room: ControlNet's side branch +1.9 → +6.7 %, +8.3 %
    once light kernels were charged beside other streams'); all 16
    savings within 15 points (median 1.1 and 3.2 points) though the rerun's eager times read
    a median 13 % off (its Q-Former +52 %, its variable selection +48 %). +9.0 % since light
    kernels streaming memory share its bandwidth."""
    rows = _lease_pair_all_within("holdout40")
    streams = [r for n, r in rows.items() if "streams" in n]
    assert len(streams) == 6 and max(abs(r.error_frac) for r in streams) <= 0.091
    assert not _saving_misses(rows)
    assert rows["holdout40_rerun/qformer_cross_attn_b8"].eager_error_frac == pytest.approx(
        0.52, abs=0.01
    )


def test_the_ocr_step_read_its_gru_directions_as_one_chain_until_the_replay_left_out_timing() -> (
    None
):
    """holdout41's miss at its freeze (+11.7 and +14.0 % from the trace): the CRNN's
    bidirectional GRU runs its two directions on two of cuDNN's streams, launched turn about;
    in the eager trace each direction's kernel started just after the other's, and the timing
    rule read 76 such coincidences per step (and 4 between the detector's and the
    recognizer's branches) as dependencies beside the trace's waits: one chain where the
    replay ran two. The replay's dependencies now leave them out where the
    waits give any (the eager simulation keeps them: a kernel that waited, waited): +6.3 %.
    Since a wait holds back only its own stream's next kernel, +3.1 % (the waits joining
    the GRU's streams back into the recognizer's no longer hold the detector's next one);
    since a record made inside cuDNN's call is read on the stream it launched on last,
    −3.3 %."""
    from traceinspect.analysis.estimate import infer_dependencies

    timeline, cols, rows = _step_occurrence("holdout41", "ocr_det_rec_2streams_b4", 2)
    every = set(infer_dependencies(timeline, rows, columns=cols))
    waits = set(infer_dependencies(timeline, rows, columns=cols, timing_beside_waits=False))
    extra = every - waits
    assert waits < every and len(extra) == 80
    names = cols.gpu("name")[rows]
    streams = cols.gpu("stream")[rows]
    # 76 join the two directions of one of the GRU's two layers (streams 149/150, 151/152),
    # each to an RNN cell; the other 4 the detector's branch to the recognizer's
    pairs = [(int(streams[i]), int(streams[j])) for i, j in extra]
    directions = [(i, j) for (i, j), p in zip(extra, pairs, strict=True) if p != (13, 17)]
    assert len(directions) == 76
    assert {frozenset(p) for p in pairs if p != (13, 17)} == {
        frozenset({149, 150}),
        frozenset({151, 152}),
    }
    assert all("elemWiseRNNcell" in str(names[j]) for _, j in directions)
    rows_now = recording_rows("holdout41", False)
    # (−3.3 % while light kernels waited for all their room, −4.8 % before light kernels
    # were charged beside other streams', −3.3 % before light kernels streaming memory shared
    # its bandwidth, −2.5 % while a streaming kernel was slowed by the total demand alone)
    assert rows_now["ocr_det_rec_2streams_b4"].error_frac == pytest.approx(-0.012, abs=0.002)


def test_cudnn_waits_hold_back_their_own_streams_work_from_the_stream_recorded_on() -> None:
    """holdout27's LSTM pair, +22.9 % at its freeze: two cuDNN LSTMs on side streams 29 and
    33, both running on cuDNN's own streams 13, 14, 21 and 22. Inside its call cuDNN records
    an event right after launching the work it marks and makes another of its streams wait
    on it; the trace names the waiting stream but not the recorded one. Read as holding back
    the thread's next launch on any stream, and as waiting on every stream's last kernel, the
    waits chained the second LSTM to the first: 77 dependencies in the first step. Now a wait
    holds back its own stream's next kernel (none where that stream launches nothing more),
    and a record made inside an operator is on the stream the thread launched on last (where
    it launched since its previous record): 30, and the step reads +5.9 % (+5.7 % before
    light kernels were charged beside other streams'; +1.5 % since the prediction reads
    cuDNN's hand-overs half way, ``occurrence.HANDOVER_WEIGHT``)."""
    from collections import Counter

    from traceinspect.analysis.estimate import infer_dependencies

    timeline, cols, rows = _step_occurrence("holdout27", "lstm_pair_2streams_b32", 0)
    deps = infer_dependencies(timeline, rows, columns=cols, timing_beside_waits=False)
    streams = cols.gpu("stream")[rows]
    assert len(deps) == 30
    # the second LSTM's first kernel (forked onto stream 33) waits for nothing
    first = int(np.flatnonzero(streams == 33)[0])
    assert [src for src, dst in deps if dst == first] == []
    # the first LSTM's second layer (stream 22) waits step by step on its first layer's
    # stream (14) only: cuDNN's hand-over, read on the stream it was recorded on
    into_22 = Counter(int(streams[src]) for src, dst in deps if streams[dst] == 22)
    assert into_22 == {14: 4}
    row = recording_rows("holdout27", False)["lstm_pair_2streams_b32"]
    assert row.error_frac == pytest.approx(0.015, abs=0.002)
    assert row.graphed_inside


def test_the_set_after_the_replay_left_out_timing_misses_on_rnns_beside_each_other() -> None:
    """holdout42, written and recorded after the replay's dependencies left out timing
    coincidences, with five cuDNN RNNs among its eight: from the trace alone 6 and 5 of 8
    within ±10 %. The misses are the three steps that run RNNs on two side streams: the
    BiLSTM sentence encoder on two batches (−10.3 / −11.0 %) and the character BiLSTM beside
    word features (−14.4 / −15.0 %) read short, the bidirectional GRU encoder beside an LSTM
    language model long (+9.5 / +12.2 %, above its range on both). Since a wait holds back
    only its own stream's next kernel and a record made inside cuDNN's call is read on the
    stream it launched on last: −12.0 / −12.7 %, −18.6 / −18.5 % and +4.9 / +7.7 % (inside
    every range), 6 and 6 of 8 within. With the timing
    coincidences kept the set reads the same count (the GRU +15.1 % on the rerun, the
    character BiLSTM −11.4 %): the rule moves these RNNs both ways, and their replays overlap
    cuDNN's directions and layers in ways no eager stream order shows. Since a light kernel
    beside another stream's is charged ``LIGHT_BESIDE_NS`` (the BiLSTMs' cell kernels ran
    2.2 µs alone and 3.0-3.1 µs side by side in the replay): the sentence encoder −6.9 /
    −7.6 %, the character BiLSTM −10.8 / −10.8 %, 7 and 7 of 8 within. 14 of 16 savings
    within 15 points: the 1-D UNet's eager time reads 24-31 % low on both."""
    rows = _lease_pair_rows("holdout42")
    missed = {n for n, r in rows.items() if abs(r.error_frac) > 0.10}
    assert missed == {
        "holdout42/bilstm_char_word_ner_2streams_b16",
        "holdout42_rerun/bilstm_char_word_ner_2streams_b16",
    }
    assert all("streams" in n for n in missed)
    assert _saving_misses(rows) == {
        "holdout42/unet1d_audio_diffusion_b4",
        "holdout42_rerun/unet1d_audio_diffusion_b4",
    }
    # the steps with no RNN on side streams: all within 8.3 %
    assert max(abs(r.error_frac) for n, r in rows.items() if "streams" not in n) <= 0.084
    # the BiLSTMs read short: in the profiled replay their LSTM cell kernels ran 1.4-1.6x their
    # eager time beside the other direction (a light kernel beside light ones keeps its pace
    # in the schedule), though that replay was itself slower than the unprofiled one
    from traceinspect.parse import load_trace

    for name, batch, eager_us, replay_us in (
        ("bilstm_char_word_ner_2streams_b16", 16, 1.86, 2.66),
        ("siamese_bilstm_sentence_sim_2streams_b64", 64, 1.98, 3.18),
    ):
        medians = []
        folder = VALIDATION_DIR / "holdout42" / name
        for mode in ("eager", "graphed"):
            gpu = load_trace(folder / f"step.b{batch}.{mode}.json.gz").gpu
            cell = gpu[gpu["name"].str.contains("elemWiseRNNcell")]
            medians.append(float(np.median(cell["end_ns"] - cell["start_ns"])) / 1000)
        assert medians == pytest.approx([eager_us, replay_us], abs=0.02)


def test_the_h200_holdout45_misses_the_fp32_gru_and_the_foreach_sgds_saving() -> None:
    """holdout45, written before the model froze and recorded on an H100 first, on an H200
    with the model unchanged (same session, two processes of one lease): from the trace alone
    14 of 16 within ±10 % (median |error| 2.9 %; 4.8 % at the freeze), 14 inside their
    ranges. The misses are the fp32 GRU on both (+23.3 / +19.5 %; +39.4 / +23.2 % at the
    freeze, +35 / +36 % on the H100; +27.9 / +22.0 % until the prediction read cuDNN's
    hand-overs half way, when the rerun's was inside its range). 14 of 16 savings within 15
    points: the foreach SGD's on both (replay 7-10 % slower than eager, its graph copying in
    96 gradients: read +31 to +34 points); the GRU's on the rerun −15.0 (−16.8)."""
    from conftest import step_read, step_verdicts_agreeing_with_replay

    rows = _lease_pair_rows("holdout45")
    assert_summary(list(rows.values()), 16, 14, 0.0287, 14)
    gru = {"holdout45/gru_fp32_one_stream_b16", "holdout45_rerun/gru_fp32_one_stream_b16"}
    assert {n for n, r in rows.items() if abs(r.error_frac) > 0.10} == gru
    sgd = {f"{s}/sgd_momentum_foreach_update" for s in ("holdout45", "holdout45_rerun")}
    assert _saving_misses(rows) == sgd
    assert all(rows[n].saving_measured < 0 for n in sgd)
    # verdicts: the SGD reads launch-bound where replay lost (as on the H100), the TF32
    # GEMMs on the first recording mixed at 17 % (replay 24 %), the GRU on the rerun mixed at
    # 15 % (replay 30 %); the other twelve launch-bound, as replay agreed
    odd, rest = [], []
    for w in _lease_pair_workloads("holdout45"):
        mixed = (w.trace.parent.parent.name, w.name) in {
            ("holdout45", "tf32_beside_fp32_gemms_2streams_b512"),
            ("holdout45_rerun", "gru_fp32_one_stream_b16"),
        }
        (odd if mixed or w.name == "sgd_momentum_foreach_update" else rest).append(w)
    assert step_verdicts_agreeing_with_replay(rest) == {"launch-bound": 12}
    read = {}
    for w in odd:
        verdict, saving = step_read(w)
        assert saving is not None
        read[w.trace.parent.parent.name, w.name] = (verdict, round(saving, 2))
    assert read == {
        ("holdout45", "sgd_momentum_foreach_update"): ("launch-bound", 0.58),
        ("holdout45_rerun", "sgd_momentum_foreach_update"): ("launch-bound", 0.58),
        ("holdout45", "tf32_beside_fp32_gemms_2streams_b512"): ("mixed", 0.17),
        ("holdout45_rerun", "gru_fp32_one_stream_b16"): ("mixed", 0.15),
    }


def test_the_h200_holdout47_reads_every_family_it_adds_within_ten_percent() -> None:
    """holdout47, eight families the set lacked (written after holdout46 was recorded on the
    H200, no model code changed since), recorded twice on one H200 lease: from the trace
    alone every graphed time within ±10 % (median |error| 1.9 %, 1.1 % before light kernels
    were charged beside other streams'; worst +5.9 %: the R-GCN
    on the rerun) and inside its range, every saving within 15 points (the sampling loop's
    on the rerun −13.3: its eager p50 there 5,787 µs ±21 % against the first process's
    4,116), and every step's verdict as replay did: the fp32 SIREN compute-bound (replay
    saved 2 %), the other seven launch-bound (52-83 %)."""
    from conftest import step_verdicts_agreeing_with_replay

    rows = _lease_pair_all_within("holdout47")
    assert_summary(list(rows.values()), 16, 16, 0.0206, 16)
    assert max(abs(r.error_frac) for r in rows.values()) == pytest.approx(0.0591, abs=0.001)
    assert not _saving_misses(rows)
    loop = rows["holdout47_rerun/topk_repetition_penalty_loop_b8"]
    assert loop.saving_error_points == pytest.approx(-13.3, abs=0.1)
    assert step_verdicts_agreeing_with_replay(_lease_pair_workloads("holdout47")) == {
        "launch-bound": 14,
        "compute-bound": 2,
    }


def test_the_h200_holdout46_read_the_stacked_lstm_a_chunk_late_as_the_h100_did(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """holdout46 on an H200, recorded on an H100 first, the model unchanged: 7 of 8 within
    ±10 % from the trace alone (median |error| 3.0 %, 6.1 % before light kernels were
    charged beside other streams'); the miss was the 3-layer cuDNN LSTM, +15.5 % and above its
    range (+13.9 % on the H100): its eager trace shows cuDNN launching
    each layer in chunks of time steps with the waits of holdout45's GRU (no record named),
    which the schedule tied to the record just before them, a chunk late. Since the
    prediction reads those hand-overs half way (``occurrence.HANDOVER_WEIGHT``) all 8 within
    (median 2.6 %; the LSTM +2.3 %, +1.4 % on the H100), all 8 inside. 7 of 8
    savings within 15 points: the decoder layer's reads +15.9 (its eager time from the trace
    +52 %). Every verdict launch-bound, as replay saved 51-91 % on each."""
    from conftest import step_verdicts_agreeing_with_replay

    from traceinspect.analysis.estimate import occurrence

    with monkeypatch.context() as m:
        m.setattr(occurrence, "HANDOVER_WEIGHT", 0.0)
        before = {w.name: fresh_row(w) for w in validation_workloads(VALIDATION_DIR / "holdout46")}
    assert_summary(list(before.values()), 8, 7, 0.0305, 8)
    assert {n for n, r in before.items() if abs(r.error_frac) > 0.10} == {"stacked_lstm_lm_b16"}
    rows = recording_rows("holdout46", False)
    assert_summary(list(rows.values()), 8, 8, 0.0256, 8)
    assert rows["stacked_lstm_lm_b16"].error_frac == pytest.approx(0.023, abs=0.001)
    assert _saving_misses(rows) == {"decoder_layer_b4"}
    assert rows["decoder_layer_b4"].saving_error_points == pytest.approx(15.9, abs=0.1)
    workloads = validation_workloads(VALIDATION_DIR / "holdout46")
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 8}


def test_cudnns_layers_handed_over_a_chunk_earlier_bound_the_range_from_below(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """cuDNN runs a multi-layer RNN in chunks of time steps, layer ``l + 1``'s chunk ``c``
    launched after layer ``l``'s chunk ``c + 1``; the wait before layer ``l + 1``'s input GEMM
    names the chunk's event (the id every layer's chunk ``c`` waits on) but not its record,
    and the record just before it ends layer ``l``'s chunk ``c + 1``. Read as the prediction
    reads it, layer 2 of holdout45's fp32 GRU waits for layer 1's first 24 steps (48 kernels)
    before its first chunk's GEMM; read as handed over (``pipelined``), for the first 12, as
    its replay ran (layer 2's first GEMM 202 µs in, 207 µs in that schedule, 362 µs in the
    prediction's). The 3-layer LSTM of holdout46 alike, chunks of 16 steps. Read so, the GRU
    is +19 % and the LSTM −11 % (+28 and +15 % a chunk late): the replays slow the layers'
    short kernels beside each other more than the schedule charges (the LSTM's 2.8 µs GEMMs
    4-5.7 µs with three layers at once), which the later reading offsets. The range's low end
    takes the handed-over reading, and the prediction the two half way
    (``occurrence.HANDOVER_WEIGHT``): the LSTM +2.3 %, inside its range on both cards; the
    GRU +23 %, above it."""
    from traceinspect.analysis.estimate import infer_dependencies

    for recording, name, chunk in (
        ("holdout45", "gru_fp32_one_stream_b16", 24),
        ("holdout46", "stacked_lstm_lm_b16", 32),
    ):
        timeline, cols, rows = _step_occurrence(recording, name, 0)
        streams = cols.gpu("stream")[rows]
        waited = []
        for pipelined in (False, True):
            deps = infer_dependencies(
                timeline, rows, columns=cols, timing_beside_waits=False, pipelined=pipelined
            )
            # per input GEMM of layer 2 (stream 14): how many of layer 1's kernels (stream
            # 21) it waits for
            waited.append(
                [
                    int((streams[: src + 1] == 21).sum())
                    for gemm in np.flatnonzero(streams == 14)
                    for src, dst in deps
                    if dst == gemm and streams[src] == 21
                ]
            )
        assert waited == [
            [2 * chunk, 3 * chunk, 4 * chunk],
            [chunk, 2 * chunk, 3 * chunk, 4 * chunk],
        ]
    gru = recording_rows("holdout45", False)["gru_fp32_one_stream_b16"]
    assert gru.error_frac == pytest.approx(0.233, abs=0.002)
    assert gru.low_us == pytest.approx(1114, abs=1)
    assert not gru.graphed_inside
    for recording, error in (("holdout46", 0.023), ("h100_holdout46", 0.014)):
        lstm = recording_rows(recording, False)["stacked_lstm_lm_b16"]
        assert lstm.error_frac == pytest.approx(error, abs=0.002)
        assert lstm.graphed_inside
    from traceinspect.analysis.estimate import occurrence

    read = []
    for weight in (0.0, 1.0):
        monkeypatch.setattr(occurrence, "HANDOVER_WEIGHT", weight)
        read.append(round(fresh_row(_workload("holdout46", "stacked_lstm_lm_b16")).error_frac, 3))
    assert read == [0.155, -0.109]


def test_the_chains_probe_on_the_h200_scales_as_the_schedule_reads() -> None:
    """The chains probe on an H200 (the H100's: test_holdout_h100): the eight hand-written
    GEMM + tanh recurrences side by side take 1.42x one (1.71x on the H100), as the schedule
    reads them (+5.0 %; −15.6 % on the H100), and 2 and 4 chains 1.09x and 1.19x (+11.1 and
    +9.1 %: the replay alternates the two chains' short kernels more than it runs them side by
    side, where the schedule charges each light kernel ``LIGHT_BESIDE_NS`` beside the other's;
    +0.1, +0.7 and +0.5 % before). cuDNN LSTMs on separate streams run one after the other
    (1.93x, 3.98x; within 3 %). The BiLSTMs: one 1.17x an LSTM, −1.8 %; two side by side
    2.12x one, −8.4 % (−8.8 and −11.5 % before the charge, short as on the H100)."""
    rows = recording_rows("chains_probe", False)

    def ratio(name: str, base: str) -> float:
        return round(rows[name].graphed_measured_us / rows[base].graphed_measured_us, 2)

    lstm, gemm = "cudnn_lstm_chains_1stream_b16", "gemm_tanh_chains_1stream_b16"
    assert [ratio(f"gemm_tanh_chains_{k}streams_b16", gemm) for k in (2, 4, 8)] == [
        1.09,
        1.19,
        1.42,
    ]
    assert [ratio(f"cudnn_lstm_chains_{k}streams_b16", lstm) for k in (2, 4)] == [1.93, 3.98]
    assert ratio("cudnn_bilstm_chains_1stream_b16", lstm) == 1.17
    assert ratio("cudnn_bilstm_chains_2streams_b16", "cudnn_bilstm_chains_1stream_b16") == 2.12
    errors = {n: round(r.error_frac, 3) for n, r in rows.items()}
    assert errors == {
        "cudnn_bilstm_chains_1stream_b16": -0.018,
        "cudnn_bilstm_chains_2streams_b16": -0.084,
        "cudnn_lstm_chains_1stream_b16": 0.015,
        "cudnn_lstm_chains_2streams_b16": 0.018,
        "cudnn_lstm_chains_4streams_b16": -0.028,
        "gemm_tanh_chains_1stream_b16": 0.024,
        "gemm_tanh_chains_2streams_b16": 0.111,
        "gemm_tanh_chains_4streams_b16": 0.091,
        "gemm_tanh_chains_8streams_b16": 0.05,
    }
    assert all(r.graphed_inside for r in rows.values())


def test_the_h200_holdout63_the_weakest_kinds_blind() -> None:
    """holdout63, eight families written at 14c44b1 to judge blind the kinds of step the model
    had read least well — MobileOne-S1's training-time branches on three streams (fp16),
    NASNet-A Mobile's separable and pooling branches on two (bf16) and PLE's small fp32 experts
    on three (many short kernels on side streams); a FixMatch step (foreach SGD with Nesterov
    momentum, an EMA model's foreach lerp of 80 parameters) and a Barlow Twins step
    (GradScaler, LARS in foreach ops); DS-CNN-L fed MFCCs copied from pinned host memory inside
    the step; Wav2Letter (fp32) and PoolFormer-S12 (bf16) — recorded on an H200 on
    2026-12-06, 20:17-20:29 UTC, the first H200 lease since holdout48, twice (the rerun seven of
    eight: the device time ran out before NASNet, recorded on the next lease at 22:18), with
    holdout62's eighth, PANNs. From the trace alone all 17 within ±10 % (median |error| 1.5 %,
    worst PLE −6.8 / −7.1 %, NASNet +3.8 / +5.3 %), all 17 inside their range, all 17 savings
    within 15 points (PANNs +14.2: its eager time from the trace +25 %), every step's verdict
    as replay did: DS-CNN, Wav2Letter and PoolFormer compute-bound (replay saved 1-8 %), the
    rest launch-bound (18-91 %)."""
    from conftest import step_verdicts_agreeing_with_replay

    sets = ("holdout63", "holdout63_rerun", "holdout62")
    rows = {f"{r}/{n}": row for r in sets for n, row in recording_rows(r, False).items()}
    assert_summary(list(rows.values()), 17, 17, 0.0150, 17)
    worst = max(rows, key=lambda n: abs(rows[n].error_frac))
    assert worst == "holdout63_rerun/ple_two_level_cgc_experts_fp32_3streams_b2048"
    assert rows[worst].error_frac == pytest.approx(-0.0715, abs=0.001)
    assert not _saving_misses(rows)
    panns = rows["holdout62/panns_wavegram_beside_logmel_cnn14_bf16_2streams_b8"]
    assert panns.saving_error_points == pytest.approx(14.2, abs=0.1)
    assert panns.eager_error_frac == pytest.approx(0.249, abs=0.005)
    verdicts = {
        "holdout63": {"launch-bound": 5, "compute-bound": 3},
        "holdout63_rerun": {"launch-bound": 5, "compute-bound": 3},
        "holdout62": {"launch-bound": 1},
    }
    for recording, expected in verdicts.items():
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == expected


def test_the_h200_holdout64_the_weakest_kinds_again_blind() -> None:
    """holdout64, eight families written at b0f7c22 (the model unchanged since holdout63) for
    the kinds of step the model had predicted least well — a cuDNN bidirectional GRU in a
    sound-event CRNN and a cuDNN LSTM language model's training step with foreach Adam (fp32,
    TF32 off), a cautious Lion update over 102 tensors with a clip and a weight EMA, a NYUD
    multi-task net's four dense heads (bf16), MaskNet's 31 small inputs (fp32), Lite-HRNet-18's
    branches on three side streams (fp16, ~1,100 short kernels), RMA's six copies from pinned
    host memory inside a 0.17 ms step — and MaxViT-T (fp16), recorded twice on one H200 lease
    on 2026-12-06, 22:11-22:33 UTC. From the trace alone all 16 within ±10 % (median |error|
    2.0 %, worst RMA +4.2 / +5.2 % and MaxViT +4.7 / +4.8 %), all 16 inside their range, all
    16 savings within 15 points (at most 4.6), every step's verdict as replay did or in the
    band between: the CRNN compute-bound (replay saved 1.6 %), the LSTM step launch-bound where
    replay saved 29 % and compute-bound where its eager run was faster and replay saved 10 %,
    the rest launch-bound (43-84 %)."""
    from conftest import step_verdicts_agreeing_with_replay

    rows = _lease_pair_rows("holdout64")
    assert_summary(list(rows.values()), 16, 16, 0.0199, 16)
    worst = max(rows, key=lambda n: abs(rows[n].error_frac))
    rma = "rma_a1_adaptation_conv1d_base_policy_pinned_obs_h2d_fp32_one_stream_b64"
    assert worst == f"holdout64_rerun/{rma}"
    assert rows[worst].error_frac == pytest.approx(0.0524, abs=0.001)
    assert max(abs(r.saving_error_points) for r in rows.values()) == pytest.approx(4.6, abs=0.1)
    lstm = "inan_tied_lstm_ptb_augmented_loss_adam_train_fp32_one_stream_b20"
    assert rows[f"holdout64/{lstm}"].saving_measured == pytest.approx(0.289, abs=0.005)
    assert rows[f"holdout64_rerun/{lstm}"].saving_measured == pytest.approx(0.102, abs=0.005)
    verdicts = {
        "holdout64": {"launch-bound": 7, "compute-bound": 1},
        "holdout64_rerun": {"launch-bound": 6, "compute-bound": 2},
    }
    for recording, expected in verdicts.items():
        workloads = validation_workloads(VALIDATION_DIR / recording)
        assert step_verdicts_agreeing_with_replay(workloads) == expected


def test_the_h200_holdout48_reads_every_graphed_time_within_ten_percent() -> None:
    """holdout48, eight more families (written after holdout47 was recorded, no model code
    changed since `holdout45`), recorded twice on one H200 lease: from the trace alone every
    graphed time within ±10 % (median |error| 2.4 %, 2.9 % at the freeze; worst the ComplEx
    link-prediction ranking's two branches, −8.7 % and −8.1 %, −9.5 % and −9.1 % and the
    first just above its range before light kernels were charged beside other streams';
    median 2.9 % and worst −7.1 % since light kernels streaming memory share its bandwidth).
    15 of 16 savings within 15 points: the MeshGraphNets processor's on the first recording
    reads +23.5, its eager time from the trace +87 % — its measured eager p50 3,170 µs (±23 %)
    there, 4,970 µs on the rerun, whose trace read it within 1 %. Every step's verdict as replay
    did: FSRCNN and SqueezeNet compute-bound (replay saved 2-6 %), the rest launch-bound
    (21-86 %)."""
    from conftest import step_verdicts_agreeing_with_replay

    rows = _lease_pair_rows("holdout48")
    assert_summary(list(rows.values()), 16, 16, 0.0258, 16)
    assert max(abs(r.error_frac) for r in rows.values()) == pytest.approx(0.0915, abs=0.001)
    mesh = "holdout48/meshgraphnet_processor_b1"
    assert _saving_misses(rows) == {mesh}
    assert rows[mesh].saving_error_points == pytest.approx(23.5, abs=0.1)
    assert rows[mesh].eager_error_frac == pytest.approx(0.87, abs=0.01)
    rerun = rows["holdout48_rerun/meshgraphnet_processor_b1"]
    assert abs(rerun.eager_error_frac) < 0.01
    assert step_verdicts_agreeing_with_replay(_lease_pair_workloads("holdout48")) == {
        "launch-bound": 12,
        "compute-bound": 4,
    }
