"""NeMo RL's sequence packing replayed (rlmcost.perf.nemo_rl_packing) and its Megatron worker's
padding of packed micro-batches under pipeline parallelism (group_passes.pp_padded).

Independent references: NVIDIA-NeMo/RL v0.7.0 nemo_rl/data/packing/algorithms.py
(``ModifiedFirstFitDecreasingPacker._pack_implementation``, ``SequencePacker._adjust_bin_count``),
nemo_rl/distributed/batched_data_dict.py ``shard_by_batch_size`` (bins dealt ``bin_idx %
shards``) and nemo_rl/models/megatron/data.py ``_get_pack_sequence_parameters_for_megatron``
(PP > 1: ``pad_packed_seq_to`` = the shard's largest bin) and ``_pack_sequences_for_megatron``
(``cu_seqlens_padded[-1] = pad_packed_seq_to``: the padding extends the last sequence). The
bins below were worked by hand from that code, phase by phase, and match its output.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import rlmcost.placement.group_passes as gp
from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.perf.nemo_rl_packing import PaddedShare, chunks_of, mffd_bins, padded_share
from rlmcost.perf.rl_step import packed
from rlmcost.placement.lengths import LengthDist

LENGTHS = [600, 500, 400, 350, 300, 200, 150, 100, 50]


def test_mffd_replays_nemo_rl_phase_by_phase() -> None:
    # capacity 1000: large (> 500) [600]; medium (> 333) [500, 400, 350]; small (> 166)
    # [300, 200]; tiny [150, 100, 50]. Phase 2: 600 takes the largest medium that fits, 400.
    # Phase 4: nothing fits 600 + 400. Phase 5 (v0.6.0 on: into the least filled bin):
    # 500, 350 -> [500, 350]; 300 opens a bin; 200, 150, 100, 50 join it (always least filled)
    assert mffd_bins(LENGTHS, 1000) == [[600, 400], [300, 200, 150, 100, 50], [500, 350]]


def test_bin_count_rises_to_a_multiple_of_the_shards() -> None:
    # _adjust_bin_count: 3 bins -> 4 for 2 shards; the bin with the most sequences gives its
    # last one to the new bin
    assert mffd_bins(LENGTHS, 1000, shards=2) == [
        [600, 400], [300, 200, 150, 100], [500, 350], [50]]  # fmt: skip
    with pytest.raises(SpecError, match="cannot fill"):
        mffd_bins([10, 20], 1000, shards=4)


def test_each_rank_pads_its_bins_to_its_largest_onto_the_last_sequence() -> None:
    # rank 0: bins 0 and 2 ([600, 400] = 1000, [500, 350] = 850 -> 1000, the last 350 + 150);
    # rank 1: [300, 200, 150, 100] = 750 and [50] -> 750 (the 50 padded to 750)
    r0 = PaddedShare(2, 2000, 600**2 + 400**2 + 500**2 + 500**2, 1850)
    assert padded_share(LENGTHS, 1000, 2) == r0  # the slowest rank
    r1_pairs = 300**2 + 200**2 + 150**2 + 100**2 + 750**2
    assert r1_pairs < r0.pairs and 1500 < r0.tokens


def test_chunks_deal_the_quantiles_by_stride() -> None:
    assert chunks_of(list(range(1, 9)), 4) == [[1, 5], [2, 6], [3, 7], [4, 8]]
    with pytest.raises(SpecError):
        chunks_of([1, 2], 3)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 1000), min_size=1, max_size=60), st.integers(1, 6))
def test_bins_hold_every_sequence_once_within_capacity(lengths: list[int], shards: int) -> None:
    if len(lengths) < shards:
        return
    plain = mffd_bins(lengths, 1000, 1)  # before the bin count is raised to a multiple of shards
    if len(lengths) < -(-len(plain) // shards) * shards:
        # NeMo RL's _adjust_bin_count raises ValueError: each bin needs a sequence
        # (nemo_rl/data/packing/algorithms.py at v0.7.0, lines 120-127)
        with pytest.raises(SpecError, match="cannot fill"):
            mffd_bins(lengths, 1000, shards)
        return
    bins = mffd_bins(lengths, 1000, shards)
    assert Counter(x for b in bins for x in b) == Counter(lengths)
    assert all(b and sum(b) <= 1000 for b in bins)
    assert len(bins) % shards == 0 and len(bins) >= shards
    share = padded_share(lengths, 1000, shards)
    # padding only adds: tokens and squared lengths at least the rank's real ones
    assert share.tokens >= share.real_tokens and share.tokens <= share.bins * 1000


def _trainer_calls(monkeypatch: pytest.MonkeyPatch, *flags: str) -> tuple[list, dict]:
    calls: list = []
    real = gp.train_time

    def spy(arch, layout, sequences, seq_len, *rest):  # noqa: ANN001, ANN202
        calls.append((layout, sequences, seq_len))
        return real(arch, layout, sequences, seq_len, *rest)

    monkeypatch.setattr(gp, "train_time", spy)
    args = ["rlvr", "--model", "llama-3.1-8b", "--gpus", "8", "--hardware", "h100-sxm",
            "--zero", "1", "--batch", "16", "--group", "8", "--max-tokens-per-gpu", "4096",
            "--packing", "--fused-loss", "--prompt-len", "96", "--response-len", "3000",
            "--length-dist", "lognormal:1500,0.7,3000", *flags, "--json"]  # fmt: skip
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    return calls, json.loads(out.stdout)


def test_nemo_rl_pipeline_trainer_runs_the_padded_bins(monkeypatch: pytest.MonkeyPatch) -> None:
    calls, out = _trainer_calls(monkeypatch, "--framework", "nemo-rl", "--pp", "2")
    lengths = [96 + t for t in LengthDist("lognormal", (1500, 0.7, 3000)).lengths(128, 3000)]
    share = padded_share(lengths, 4096, 4)  # 8 GPUs / PP 2: 4 DP ranks, one mini-batch
    layout, sequences, seq_len = calls[-1]
    per_rank = -(-sequences // layout.dp)
    # the rank's micro-batches are its bins, its tokens their padded length (to rounding)
    assert -(-per_rank // layout.micro_batch) == share.bins
    assert share.tokens <= per_rank * seq_len < share.tokens + per_rank
    assert share.tokens > share.real_tokens
    assert any("padded to the rank's largest" in n for n in out["notes"])


@pytest.mark.parametrize("flags", [("--framework", "nemo-rl", "--pp", "1"),
                                   ("--framework", "none", "--pp", "2")])  # fmt: skip
def test_no_padding_without_pipeline_or_framework(monkeypatch: pytest.MonkeyPatch,
                                                  flags: tuple[str, ...]) -> None:  # fmt: skip
    calls, out = _trainer_calls(monkeypatch, *flags)
    lengths = [96 + t for t in LengthDist("lognormal", (1500, 0.7, 3000)).lengths(128, 3000)]
    _, sequences, seq_len = calls[-1]
    assert (sequences, seq_len) == (packed(lengths).sequences, packed(lengths).seq_len)
    assert not any("padded to the rank's largest" in n for n in out["notes"])
