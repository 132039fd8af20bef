"""Pai-Megatron-Patch's Qwen3-235B-A22B H800 rows in ``rlmcost validate``: the ModelZoo pp32-a2a
layout at two micro-batch sizes (alibaba/Pai-Megatron-Patch issue 658; rlmcost.perf.moe_ffn
'Checked')."""

from __future__ import annotations

import pytest

from rlmcost.perf.validate import load_table, validate

SOURCE = "pai_megatron_patch"
ISSUE = "Pai-Megatron-Patch/issues/658"


def _rows() -> list[dict]:
    return [r for r in load_table()["rows"] if r["source"] == SOURCE]


@pytest.mark.parametrize(
    ("tp", "mbs", "gbs", "step_s", "tgs"),
    # the issue's results table: TimePerIter (s) and Tokens/GPU/Second, 256 H800, seq 4096
    [(1, 4, 4096, 42.537, 1540.68), (2, 4, 4096, 43.495, 1506.76),
     (2, 1, 2048, 22.42, 1461.56), (1, 1, 2048, 22.946, 1428.04)],
)  # fmt: skip
def test_rows_transcribe_the_issue(tp, mbs, gbs, step_s, tgs):
    # the table's own identity: TGS = GBS x 4096 / (step x 256), within 0.02 of its digits
    assert gbs * 4096 / (step_s * 256) == pytest.approx(tgs, abs=0.02)
    (r,) = [r for r in _rows() if f"tp{tp}-" in r["id"] and f"-mbs{mbs}-" in r["id"]]
    lay = r["layout"]
    assert r["published"] == step_s and r["batch"] == gbs and ISSUE in r["cite"]
    assert (lay["tp"], lay["pp"], lay["virtual_stages"], lay["ep"], lay["micro_batch"]) == (
        tp, 32, 3, 8, mbs
    )
    assert lay["tp"] * lay["pp"] * lay["dp"] == 256 and r["hardware"] == "h800"
    # the all-to-all dispatcher, forced balance, the fused loss
    assert "ep_dispatcher" not in r["options"] and "moe_rank_imbalance" not in r["options"]
    assert "logprob_head" not in r["options"]


def test_the_miss_is_per_micro_batch_not_per_token():
    # The same layout at 16,384 tokens per micro-batch (MBS 4) is reproduced within 15 % (10 %
    # before the all-to-all dispatcher's sort by local expert, a per-token term that moved them
    # +9.2 / +5.1 -> +13.4 / +9.1 %, rlmcost.perf.moe_sort_chunks): the per-token GPU parts
    # (grouped GEMMs, all-to-all bytes, attention) are priced; at 4,096 tokens (MBS 1) rlmcost is
    # faster than the runs, by more: the missing time is per micro-batch and layer
    # (rlmcost.perf.moe_ffn 'Checked'), not a per-token rate
    rows = {r.id: r for r in validate(SOURCE).rows if "qwen3-235b" in r.id}  # issue 658's
    assert len(rows) == 4
    for tp in (1, 2):
        (big,) = [r for k, r in rows.items() if f"tp{tp}-" in k and "mbs4" in k]
        (small,) = [r for k, r in rows.items() if f"tp{tp}-" in k and "mbs1" in k]
        assert abs(big.error) < 0.15
        assert small.error < big.error - 0.08


ISSUE_643 = "Pai-Megatron-Patch/issues/643"


@pytest.mark.parametrize(
    ("pp", "ep", "gbs", "step_s", "tgs"),
    # issue 643's results table: TimePerIter (s) and Tokens/GPU/Second, 16 H800, seq 8192
    [(2, 8, 128, 10.361, 6325), (4, 4, 256, 20.992, 6244)],
)  # fmt: skip
def test_qwen3_30b_rows_transcribe_issue_643(pp, ep, gbs, step_s, tgs):
    # the table's own identity: TGS = GBS x 8192 / (step x 16), within 0.5 of its digits
    assert gbs * 8192 / (step_s * 16) == pytest.approx(tgs, abs=0.5)
    (r,) = [r for r in _rows() if f"-pp{pp}-ep{ep}-cf1" in r["id"]]
    lay, o = r["layout"], r["options"]
    assert r["published"] == step_s and r["batch"] == gbs and ISSUE_643 in r["cite"]
    assert r["model"] == {"name": "qwen3-30b-a3b", "seq": 8192} and r["hardware"] == "h800"
    assert (lay["tp"], lay["pp"], lay["ep"], lay["etp"], lay["micro_batch"]) == (1, pp, ep, 1, 1)
    assert lay["tp"] * lay["pp"] * lay["dp"] == 16 and lay["ckpt"] == "none"
    # --moe-expert-capacity-factor 1.0, not padded; the router's own (aux-loss) routing
    assert lay["moe_capacity_factor"] == 1.0 and not lay.get("moe_pad_to_capacity", False)
    assert o["moe_rank_imbalance"] == 1.3 and "ep_dispatcher" not in o


def test_capacity_factor_caps_the_issue_643_rows_imbalance():
    # the capacity factor 1.0 caps the router's 1.30 EP-rank imbalance at the mean: the rows
    # price as balanced routing, and faster than the same rows dropless (rlmcost.parallel.
    # moe_capacity); both still under the runs (rlmcost.perf.moe_ffn 'Checked'), the capped
    # rows by > 20 % with Megatron-core's unfused permutation priced (perf.moe_permute)
    import copy

    from rlmcost.perf.validate import predict_row

    for r in [r for r in _rows() if "qwen3-30b" in r["id"]]:
        balanced, dropless = copy.deepcopy(r), copy.deepcopy(r)
        balanced["options"]["moe_rank_imbalance"] = 1.0
        dropless["layout"]["moe_capacity_factor"] = None
        capped = predict_row(r).predicted
        assert capped == predict_row(balanced).predicted
        assert capped < predict_row(dropless).predicted < r["published"]
        assert capped < 0.8 * r["published"]
