"""Listen, Attend and Spell (Chan et al., 2016) scoring 4 utterances of 3.84 s against a
32-character hypothesis prefix each, teacher-forced, as a rescoring pass runs it: the listener (a
2-layer bidirectional LSTM over frame-stacked filterbanks) on one side stream, beside the speller's
character embedding and 2-layer LSTM over the prefix on the other, then, after the join, the
attention, the character distribution and the prefix's log-likelihood (sixtieth hold-out: under
bf16 autocast, the LSTMs held in bf16 and run with autocast off: on side stream 1 ``nn.LSTM(320,
256, num_layers 2, bidirectional)`` over 96 stacked frames, which cuDNN runs as one call, each
layer's two directions on streams of its own and the layers in turn, some 400 small GEMM and cell
kernels in a serial chain of 2 x 96 steps; on side stream 2 the embedding and ``nn.LSTM(256, 512,
num_layers 2)`` over the 32 characters, whose layers cuDNN pipelines over streams of its own, some
130 kernels; then the attention MLPs, two batched GEMMs around an fp32 softmax, the character MLP
and an fp32 log-softmax and gather, some 30 kernels; some 1 to 2 ms of GPU time in all, most of it
the listener's recurrence). Laid out as the paper's model with two simplifications common to its
reimplementations: the listener's pyramid (three pBLSTM layers, each halving time by concatenating
neighbouring outputs) replaced by stacking 4 neighbouring frames before one 2-layer BLSTM (384 x
80 -> 96 x 320, 256 units a direction), and the speller's attention applied after its recurrence
(Luong-style: the speller's state s_i from the previous characters alone, the context c_i not fed
back into the LSTM, so the prefix's states come from one cuDNN call). The speller: ``Embedding(34,
256)``, ``nn.LSTM(256, 512, 2, batch first)``; the attention, e_{i,u} = <phi(s_i), psi(h_u)> with
phi and psi each ``Linear(512, 512)`` + ReLU, alpha = softmax over the 96 listener frames (fp32),
c_i = sum_u alpha_{i,u} h_u; the character distribution an MLP over [s_i; c_i] (``Linear(1024,
512)``, ReLU, ``Linear(512, 34)``) and a log-softmax (fp32); the score the sum of each next
character's log-probability. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). fp32 weights for the embedding and
linears under ``torch.autocast(dtype=torch.bfloat16)`` on a GPU; the two LSTMs held in bf16 and run
with autocast off, since autocast's cuDNN RNN wrapper would cast them to fp16 whatever its dtype
(fp32 throughout on a CPU); eval, no gradients, random weights (torch's defaults). Inputs (two
input sets), batch first: the log-mel filterbanks (4, 384, 80), Gaussian, fp32, the prefix
characters (4, 32) int64, <sos> (1) first, then uniform in [3, 34), and the next characters (4, 32)
int64, uniform in [3, 34). Returns the log-probabilities (4, 32, 34) and the prefix scores (4,),
fp32.

    traceinspect profile las_listener_bilstm_beside_speller_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

N_MELS, FRAMES, STACK, LISTEN_UNITS = 80, 384, 4, 256
N_LABELS, EMBED, SPELL_UNITS, PREFIX = 34, 256, 512, 32
SOS = 1


class Listener(nn.Module):
    def __init__(self, n_mels: int, stack: int, units: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.stack, self.dtype = stack, dtype
        self.blstm = nn.LSTM(n_mels * stack, units, 2, batch_first=True, bidirectional=True)

    def forward(self, feats: Tensor) -> Tensor:
        b, t, f = feats.shape
        x = feats.reshape(b, t // self.stack, f * self.stack).to(self.dtype)
        return self.blstm(x)[0]  # (b, t / stack, 2 units)


class Speller(nn.Module):
    def __init__(self, n_labels: int, embed: int, units: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.dtype = dtype
        self.embedding = nn.Embedding(n_labels, embed)
        self.lstm = nn.LSTM(embed, units, 2, batch_first=True)

    def forward(self, prefix: Tensor) -> Tensor:
        return self.lstm(self.embedding(prefix).to(self.dtype))[0]  # (b, l, units)


class AttendAndSpell(nn.Module):
    def __init__(self, listen_dim: int, units: int, n_labels: int) -> None:
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(units, 512), nn.ReLU())
        self.psi = nn.Sequential(nn.Linear(listen_dim, 512), nn.ReLU())
        self.character_distribution = nn.Sequential(
            nn.Linear(units + listen_dim, 512), nn.ReLU(), nn.Linear(512, n_labels)
        )

    def forward(self, s: Tensor, h: Tensor) -> Tensor:
        energy = torch.bmm(self.phi(s), self.psi(h).transpose(1, 2))  # (b, l, t)
        alpha = torch.softmax(energy.float(), dim=-1).to(h.dtype)
        context = torch.bmm(alpha, h)  # (b, l, listen_dim)
        logits = self.character_distribution(torch.cat((s, context), dim=-1))
        return torch.log_softmax(logits.float(), dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, frames, n_mels, listen, embed, spell, prefix_len = 2, 16, 8, 8, 8, 16, 5
    else:
        batch, frames, n_mels, listen = 4, FRAMES, N_MELS, LISTEN_UNITS
        embed, spell, prefix_len = EMBED, SPELL_UNITS, PREFIX
    on_gpu = device.type == "cuda"
    rnn_dtype = torch.bfloat16 if on_gpu else torch.float32
    listener = Listener(n_mels, STACK, listen, rnn_dtype).to(device)
    listener.blstm.to(rnn_dtype)
    speller = Speller(N_LABELS, embed, spell, rnn_dtype).to(device)
    speller.lstm.to(rnn_dtype)
    head = AttendAndSpell(2 * listen, spell, N_LABELS).to(device)
    model = nn.ModuleList([listener, speller, head]).eval()
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=on_gpu)
    streams = side_streams(device, 2)

    def listen_to(feats: Tensor) -> Tensor:
        with torch.autocast(device.type, enabled=False):  # cuDNN RNN: bf16 weights as held
            return listener(feats)

    def spell_prefix(prefix: Tensor) -> Tensor:
        with torch.autocast(device.type, enabled=False):
            return speller(prefix)

    @torch.no_grad()
    def step(feats: Tensor, prefix: Tensor, targets: Tensor) -> tuple[Tensor, Tensor]:
        with autocast:
            h, s = fork_join(
                device, streams, [lambda: listen_to(feats), lambda: spell_prefix(prefix)]
            )
            logp = head(s, h)
        score = logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1).sum(dim=1)
        return logp, score

    def make() -> tuple[Tensor, Tensor, Tensor]:
        prefix = torch.randint(3, N_LABELS, (batch, prefix_len), device=device)
        prefix[:, 0] = SOS
        return (
            torch.randn(batch, frames, n_mels, device=device),
            prefix,
            torch.randint(3, N_LABELS, (batch, prefix_len), device=device),
        )

    inputs = [make() for _ in range(2)]
    precision = "bf16 autocast (LSTMs bf16)" if on_gpu else "fp32"
    description = (
        f"LAS: listener BiLSTM {listen} x2 over {frames // STACK} stacked frames beside the "
        f"speller (embedding + 2-layer LSTM {spell}, {prefix_len} chars) on 2 side streams, "
        f"attention + character MLP, {precision}, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
