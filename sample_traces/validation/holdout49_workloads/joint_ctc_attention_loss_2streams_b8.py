"""The joint CTC / attention loss of an ESPnet-style hybrid speech recognizer (Kim, Hori and
Watanabe, 2017) on 8 utterances, the CTC forward algorithm written out as a loop on one side
stream beside the attention decoder on another (forty-ninth hold-out: a long chain of tiny
single-block kernels beside a short chain of GEMMs and attention, after a shared encoder): 8
utterances of 400 frames x 80 mel features, targets of up to 24 tokens from a vocabulary of
1,000 (id 0 the CTC blank, id 999 the sos / eos). On the current stream, the shared encoder: an
ESPnet-style ``Conv2dSubsampling`` (``Conv2d(1, 256, 3, stride 2, padding 1)`` + ReLU,
``Conv2d(256, 256, 3, stride 2, padding 1)`` + ReLU, 400 x 80 -> 100 x 20), ``Linear(5120,
256)``, fixed sinusoidal positions, 6 pre-norm layers of the project's
``_blocks.PreNormAttention`` (d 256, 4 heads, SDPA, a boolean key-padding mask from the frame
counts) and ``_blocks.ResidualMLP`` (1,024, GELU), a final LayerNorm. Side stream 1, the CTC
branch: ``Linear(256, 1000)``, ``log_softmax`` in fp32, the emissions of the 49 extended labels
(blank, y1, blank, ..., y24, blank) gathered once, (8, 100, 49); then the alpha recursion in log
space over the 99 frames after the first, per frame the alphas shifted by one and (where the
label differs from the one two back and is no blank) by two states (``F.pad`` with -inf), two
``torch.logaddexp``, the frame's emissions added and a ``where`` keeping the old alphas past the
utterance's frame count: some 7 kernels of one (8, 49) block each per frame, 700 in all; the
log-likelihood from the last two states of each target, divided by the target length and
averaged, as ``F.ctc_loss``'s "mean" (which itself copies the lengths to the host and cannot be
captured). Side stream 2, the attention branch: teacher forcing on [sos, y1..y24] against
[y1..yU, eos, ignored...], an ``nn.Embedding(1000, 256)`` + sinusoidal positions, 4 decoder
layers (causal ``PreNormAttention``, cross ``PreNormAttention`` to the encoder output with the
key-padding mask, ``ResidualMLP``), a LayerNorm, ``Linear(256, 1000)`` and label-smoothed (0.1)
cross-entropy in fp32 with ``ignore_index``. After the join: 0.3 CTC + 0.7 attention. bf16 on a
GPU but the losses (fp32), eval mode, no gradients. Fork and join are the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside capture).
Inputs: the features (8, 400, 80), the frame counts after subsampling (8,) int64 in 85..100, the
targets (8, 24) int64 in 1..998 (padded past their lengths) and the target lengths (8,) int64 in
12..24. Returns (3,) fp32: the joint, CTC and attention losses.

    traceinspect profile joint_ctc_attention_loss_2streams_b8.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import PreNormAttention, ResidualMLP
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

BLANK, CTC_WEIGHT, SMOOTHING, IGNORE = 0, 0.3, 0.1, -100


def sinusoids(length: int, d: int) -> Tensor:
    pos = torch.arange(length, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
    table = torch.zeros(length, d)
    table[:, 0::2], table[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
    return table


class Encoder(nn.Module):
    def __init__(self, mels: int, d: int, heads: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.sub = nn.Sequential(
            nn.Conv2d(1, d, 3, 2, 1), nn.ReLU(), nn.Conv2d(d, d, 3, 2, 1), nn.ReLU()
        )
        self.proj = nn.Linear(d * (mels // 4), d)
        self.attn = nn.ModuleList(PreNormAttention(d, heads) for _ in range(layers))
        self.mlp = nn.ModuleList(ResidualMLP(d, hidden) for _ in range(layers))
        self.norm = nn.LayerNorm(d)

    def forward(self, feats: Tensor, pos: Tensor, key_mask: Tensor) -> Tensor:
        x = self.sub(feats.unsqueeze(1))  # (b, d, frames / 4, mels / 4)
        x = self.proj(x.permute(0, 2, 1, 3).flatten(2)) + pos
        for attn, mlp in zip(self.attn, self.mlp, strict=True):
            x = mlp(attn(x, attn_mask=key_mask))
        return self.norm(x)


class Decoder(nn.Module):
    def __init__(self, vocab: int, d: int, heads: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.self_attn = nn.ModuleList(PreNormAttention(d, heads) for _ in range(layers))
        self.cross = nn.ModuleList(PreNormAttention(d, heads, cross=True) for _ in range(layers))
        self.mlp = nn.ModuleList(ResidualMLP(d, hidden) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.out = nn.Linear(d, vocab)

    def forward(
        self, ys: Tensor, pos: Tensor, memory: Tensor, causal: Tensor, key_mask: Tensor
    ) -> Tensor:
        x = self.embed(ys) + pos
        for sa, ca, mlp in zip(self.self_attn, self.cross, self.mlp, strict=True):
            x = mlp(ca(sa(x, attn_mask=causal), memory, attn_mask=key_mask))
        return self.out(self.norm(x))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, frames, mels, vocab, units = 2, 48, 16, 20, 4
        d, heads, hidden, enc_layers, dec_layers = 16, 2, 32, 1, 1
    else:
        batch, frames, mels, vocab, units = 8, 400, 80, 1000, 24
        d, heads, hidden, enc_layers, dec_layers = 256, 4, 1024, 6, 4
    dtype = low_precision(device)
    sos = eos = vocab - 1
    t_enc, states = frames // 4, 2 * units + 1
    encoder = Encoder(mels, d, heads, hidden, enc_layers)
    decoder = Decoder(vocab, d, heads, hidden, dec_layers)
    ctc_head = nn.Linear(d, vocab)
    model = nn.ModuleList([encoder, decoder, ctc_head]).to(device, dtype).eval()
    enc_pos = sinusoids(t_enc, d).to(device, dtype)
    dec_pos = sinusoids(units + 1, d).to(device, dtype)
    causal = torch.ones(units + 1, units + 1, dtype=torch.bool, device=device).tril()
    frame_ids = torch.arange(t_enc, device=device)
    token_ids = torch.arange(units + 1, device=device)
    streams = side_streams(device, 2)

    def ctc_branch(memory: Tensor, lengths: Tensor, targets: Tensor, tlens: Tensor) -> Tensor:
        logp = F.log_softmax(ctc_head(memory).float(), dim=-1)  # (b, t_enc, vocab)
        ext = torch.full((batch, states), BLANK, dtype=torch.long, device=device)
        ext[:, 1::2] = targets
        emit = logp.gather(2, ext[:, None, :].expand(-1, t_enc, -1))  # (b, t_enc, states)
        skip = (ext != BLANK) & F.pad(ext[:, 2:] != ext[:, :-2], (2, 0), value=False)
        skip_pen = torch.zeros(batch, states, device=device).masked_fill_(~skip, -math.inf)
        active = (frame_ids[:, None] < lengths[None, :]).unsqueeze(-1)  # (t_enc, b, 1)
        alpha = torch.full((batch, states), -math.inf, device=device)
        alpha[:, :2] = emit[:, 0, :2]
        for t in range(1, t_enc):
            one = F.pad(alpha[:, :-1], (1, 0), value=-math.inf)
            two = F.pad(alpha[:, :-2], (2, 0), value=-math.inf) + skip_pen
            new = torch.logaddexp(torch.logaddexp(alpha, one), two) + emit[:, t]
            alpha = torch.where(active[t], new, alpha)
        ends = torch.stack([2 * tlens, 2 * tlens - 1], dim=1)
        loglik = torch.logsumexp(alpha.gather(1, ends), dim=1)
        return (-loglik / tlens).mean()

    def attention_branch(
        memory: Tensor, key_mask: Tensor, targets: Tensor, tlens: Tensor
    ) -> Tensor:
        ys_in = torch.cat([torch.full((batch, 1), sos, device=device), targets], dim=1)
        ys_out = torch.cat([targets, torch.full((batch, 1), eos, device=device)], dim=1)
        ys_out = torch.where(token_ids == tlens[:, None], eos, ys_out)
        ys_out = torch.where(token_ids > tlens[:, None], IGNORE, ys_out)
        logits = decoder(ys_in, dec_pos, memory, causal, key_mask).float()
        return F.cross_entropy(
            logits.flatten(0, 1),
            ys_out.flatten(),
            ignore_index=IGNORE,
            label_smoothing=SMOOTHING,
        )

    @torch.no_grad()
    def step(feats: Tensor, lengths: Tensor, targets: Tensor, tlens: Tensor) -> Tensor:
        key_mask = (frame_ids[None, :] < lengths[:, None])[:, None, None, :]
        memory = encoder(feats, enc_pos, key_mask)
        ctc, att = fork_join(
            device,
            streams,
            [
                lambda: ctc_branch(memory, lengths, targets, tlens),
                lambda: attention_branch(memory, key_mask, targets, tlens),
            ],
        )
        return torch.stack([CTC_WEIGHT * ctc + (1 - CTC_WEIGHT) * att, ctc, att])

    inputs = []
    for i in range(2):
        lengths = t_enc - torch.arange(batch) * 2 - i
        tlens = torch.randint(units // 2, units + 1, (batch,))
        inputs.append(
            (
                torch.randn(batch, frames, mels, device=device, dtype=dtype),
                lengths.to(device),
                torch.randint(1, vocab - 1, (batch, units), device=device),
                tlens.to(device),
            )
        )
    description = (
        f"joint CTC/attention loss, {enc_layers}L encoder d{d} over {t_enc} frames, CTC alpha "
        f"loop {t_enc} frames x {states} states, {dec_layers}L decoder, vocab {vocab}, "
        f"b{batch}, 2 side streams"
    )
    return Built(step, inputs, description, [model, enc_pos, dec_pos, causal])


if __name__ == "__main__":
    main(build, __doc__)
