"""Prefix sharing of a prompt group's K samples (rlmcost.placement.prefix_share, prefills).

Independent references: vLLM V1's cache-hit rule (vllm-project/vllm ``vllm/v1/core/
kv_cache_manager.py`` ``get_computed_blocks``: whole blocks, at most ``num_tokens - 1`` tokens,
so the last token is recomputed for its logits); a hand count of a tail's prefill FLOPs from
the per-token pieces of ``blocks.work`` (body per token, LM head, one query-key pair's FLOPs
x the softmax layers); the prefill of K samples done one prompt at a time.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kv_replay import ARCH, H100, segments
from typer.testing import CliRunner

from rlmcost.blocks.attention import attention_flops_per_pair
from rlmcost.blocks.work import work_head_per_token, work_linear_per_token
from rlmcost.choices import AttnCounting, Dtype
from rlmcost.cli import app
from rlmcost.compiled.blocks import work_prefill
from rlmcost.deployment.spec import EngineSpec
from rlmcost.errors import SpecError
from rlmcost.placement.paged import Paged, Segment, paged_admit
from rlmcost.placement.prefills import prefills
from rlmcost.placement.prefix_share import PrefixShare, hits, hits_numpy, tail_flops
from rlmcost.placement.rollout import DecodeCost, decode_flops, timeline
from rlmcost.placement.sglang_admit import TokenPool, sglang_admit
from rlmcost.timing import Roofline


def _cost(prompt: int, counting: AttnCounting = AttnCounting.FULL) -> DecodeCost:
    f0, f1 = decode_flops(ARCH)
    return DecodeCost(f0, f1, int(work_prefill(ARCH, prompt, 1, counting)), 16e9, 131072.0)


def _hand_tail(context: int, hit: int, counting: AttnCounting) -> int:
    """own tokens x body + LM head + pairs x one pair's FLOPs x softmax layers: ``full``
    counts own x context pairs (each own query meets every key), ``causal`` sum_{i=hit+1}^{
    context} i."""
    own = context - hit
    pairs = own * context if counting is AttnCounting.FULL else sum(range(hit + 1, context + 1))
    pair = int(attention_flops_per_pair(ARCH)) * int(ARCH.n_softmax_layers)
    return own * int(work_linear_per_token(ARCH)) + int(work_head_per_token(ARCH)) + pairs * pair


def test_a_sample_hits_the_prompts_whole_blocks_but_its_last_token():
    # vLLM: max_cache_hit_length = num_tokens - 1, whole blocks of 16
    vllm = PrefixShare(8, 16)
    assert vllm.hit(100) == 96  # 6 blocks; 4 tokens prefilled
    assert vllm.hit(96) == 80  # a prompt of whole blocks recomputes its last block
    assert vllm.hit(16) == 0  # no full block before the last token: nothing shared
    # SGLang's radix cache, page size 1: all but the last prompt token
    assert PrefixShare(8, 1).hit(100) == 99
    with pytest.raises(SpecError):
        PrefixShare(0, 16)


@pytest.mark.parametrize("counting", [AttnCounting.FULL, AttnCounting.CAUSAL])
@pytest.mark.parametrize(("context", "hit"), [(100, 96), (100, 0), (1000, 992), (300, 96)])
def test_tail_flops_are_the_hand_count(counting, context, hit):
    assert tail_flops(ARCH, context, hit, counting) == _hand_tail(context, hit, counting)


@pytest.mark.parametrize("counting", [AttnCounting.FULL, AttnCounting.CAUSAL])
def test_k_samples_prefill_one_prompt_plus_k_tails(counting):
    # K = 4 samples of one 100-token prompt admitted together (vLLM blocks of 16): the first
    # prefills 100 tokens, the other three their last 4 (96 cached)
    prompt, k = 100, 4
    cost = _cost(prompt, counting)
    segs = [Segment(i, 0, 10 + i, prompt, i) for i in range(k)]
    share = PrefixShare(k, 16, counting=counting)
    pre = prefills(ARCH, prompt, segs, cost, Paged(10**6, 16, counting, share))
    one = int(work_prefill(ARCH, prompt, 1, counting))
    tail = _hand_tail(prompt, 96, counting)
    assert pre.steps == [0] and pre.flops == [float(one + (k - 1) * tail)]
    assert pre.shared_flops == (k - 1) * (one - tail) and pre.recompute_flops == 0
    assert pre.tail_tokens == [3 * 4] and pre.fresh == [1]  # three tails of 4 own tokens
    # the same without sharing: K whole prompts
    off = prefills(ARCH, prompt, segs, cost, Paged(10**6, 16, counting))
    assert off.flops == [float(k * one)] and off.shared_flops == 0


def test_a_group_whose_samples_all_left_prefills_its_prompt_again():
    # samples 0 and 1 run [0, 5) and [0, 3); sample 2 is admitted at 5, when none runs
    # (conservative: the freed blocks may still be cached); sample 3 at 6 beside sample 2
    segs = [(0, 0, 5, 10), (1, 0, 3, 10), (2, 5, 9, 10), (3, 6, 8, 10), (4, 0, 9, 10)]
    assert hits(segs, 10, PrefixShare(4, 4)) == [0, 8, 0, 8, 0]  # 4 starts the next group
    # SGLang: a sibling in the same prefill batch is not matched yet
    assert hits(segs, 10, PrefixShare(4, 1, same_step=False)) == [0, 0, 0, 9, 0]
    # a preempted sample readmitted while a sibling runs recomputes only past the prompt
    assert hits([(0, 0, 9, 10), (1, 0, 3, 10), (1, 4, 9, 13)], 10, PrefixShare(2, 4)) == [0, 8, 8]
    assert hits(segs, 10, None) == [0] * 5 and hits(segs, 10, PrefixShare(1, 4)) == [0] * 5


def _hits_by_definition(segs, prompt, share):  # noqa: ANN001, ANN202
    """hits' docstring read literally: a segment hits when a sibling segment started before it
    (or in the same step before it, in (start, seq) order, where ``same_step``) and ends
    after its start; every pair compared."""
    order = sorted(range(len(segs)), key=lambda k: (segs[k][1], segs[k][0]))
    rank = {k: r for r, k in enumerate(order)}
    out = []
    for k, (seq, start, _end, _ctx) in enumerate(segs):
        runs = any(
            j != k and sq // share.group == seq // share.group and e > start
            and (s < start or (share.same_step and s == start and rank[j] < rank[k]))
            for j, (sq, s, e, _c) in enumerate(segs)
        )
        out.append(share.hit(prompt) if runs else 0)
    return out


@settings(max_examples=200, deadline=None)
@given(
    spans=st.lists(st.tuples(st.integers(0, 12), st.integers(1, 6)), min_size=1, max_size=30),
    group=st.integers(2, 5),
    same_step=st.booleans(),
)
def test_hits_is_its_rule_over_every_pair(spans, group, same_step):
    # segments of samples 0, 1, 2 ... in turn (a sample may come back: readmitted later)
    segs = [(i % (2 * group), s, s + n, 10) for i, (s, n) in enumerate(spans)]
    share = PrefixShare(group, 4, same_step=same_step)
    np = pytest.importorskip("numpy")
    expected = _hits_by_definition(segs, 10, share)
    assert hits(segs, 10, share) == expected
    # the same rule column by column with numpy (the timeline's form for many segments)
    seq, start, end, _ = (np.array(c, dtype=np.int64) for c in zip(*segs, strict=True))
    assert hits_numpy(seq, start, end, share.hit(10), group, same_step).tolist() == expected


def test_hits_of_a_large_group_in_one_pass():
    # GRPO at K = 4096 (one group of 4096 samples over 20,000 segments): the check runs once
    # per segment, not once per earlier sibling (it took minutes a query at K >= 1024)
    segs = [(k % 4096, k // 40, k // 40 + 3, 10) for k in range(20000)]
    out = hits(segs, 10, PrefixShare(4096, 4))
    assert out[0] == 0 and set(out[1:]) == {8}


def _segments(s):  # noqa: ANN001
    return segments(s), s.preemptions


def test_vllm_holds_a_groups_prompt_blocks_once():
    # prompt 8, blocks of 4: the samples share 4 * ((8 - 1) // 4) = 4 tokens, one block. Two
    # samples of 6 tokens at their k-th step hold ceil((8 + k) / 4) blocks each unshared:
    # 3 + 3 up to k = 4, then 4 + 4 = 8 > 7 blocks (a pool of 28 tokens): the newer is
    # preempted after 4 tokens and recomputes its 12-token context after the other finishes
    off = paged_admit([6, 6], 8, 2, Paged(28, 4))
    assert _segments(off) == ([(0, 0, 6, 8), (1, 0, 4, 8), (1, 6, 8, 12)], 1)
    # shared: 1 + ceil((4 + k) / 4) x 2 = 1 + 3 + 3 = 7 <= 7 blocks at k = 5, 6: both run
    on = paged_admit([6, 6], 8, 2, Paged(28, 4, share=PrefixShare(2, 4)))
    assert _segments(on) == ([(0, 0, 6, 8), (1, 0, 6, 8)], 0)
    # a pool of 6 blocks: 1 + 3 + 3 = 7 > 6 at k = 5; readmitted when its sibling has left,
    # so it holds (and recomputes) its whole context
    six = paged_admit([6, 6], 8, 2, Paged(24, 4, share=PrefixShare(2, 4)))
    assert _segments(six) == ([(0, 0, 6, 8), (1, 0, 4, 8), (1, 6, 8, 12)], 1)
    # two groups (samples 0, 1 and 2), 10 blocks: 2 shared + 3 x 3 own = 11 > 10 at k = 5
    two = paged_admit([6, 6, 6], 8, 3, Paged(40, 4, share=PrefixShare(2, 4)))
    assert _segments(two) == ([(0, 0, 6, 8), (1, 0, 6, 8), (2, 0, 4, 8), (2, 6, 8, 12)], 1)


def test_sglang_holds_a_groups_prompt_once():
    # prompt 10, page 1: the samples share 9 tokens. Unshared two requests of 100 hold
    # 2 (10 + k) <= 200 slots up to k = 90 (sglang_admit's docstring example); shared
    # 9 + 2 (1 + k) <= 200 up to k = 94: the newer is retracted after 94 tokens
    on = sglang_admit([100, 100], 10, 2,
                      TokenPool(200, 100, round_tokens=1, share=PrefixShare(2, 1, False)))
    assert _segments(on) == ([(0, 0, 100, 10), (1, 0, 94, 10), (1, 100, 106, 104)], 1)


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 200), min_size=2, max_size=24),
    prompt=st.integers(1, 300),
    group=st.integers(2, 8),
    pool=st.integers(400, 20000),
    block=st.sampled_from([1, 16]),
    sglang=st.booleans(),
)
def test_sharing_never_slows_generation_nor_admits_fewer(lengths, prompt, group, pool, block,
                                                         sglang):  # fmt: skip
    roof = Roofline(H100, 1, Dtype.BF16)
    cost = _cost(prompt)
    share = PrefixShare(group, 1 if sglang else block, same_step=not sglang)

    def run(s: PrefixShare | None):
        kv = (TokenPool(pool, max(lengths), share=s) if sglang
              else Paged(pool - pool % block, block, share=s))  # fmt: skip
        return timeline(ARCH, prompt, tuple(lengths), 64, cost, roof, None, None, kv)

    on, off = run(share), run(None)
    assert on.slots >= off.slots
    if on.preemptions == 0 and off.preemptions == 0:  # the pool holds what each admits
        assert on.time.bound_s <= off.time.bound_s * (1 + 1e-9)
        assert on.predicted_s <= off.predicted_s * (1 + 1e-9)
    # (not under KV pressure: more admitted sequences can preempt a longer context later,
    # test_sharing_under_kv_pressure_can_preempt_a_longer_context)


def test_sharing_under_kv_pressure_can_preempt_a_longer_context():
    """The anomaly the property above leaves out (hypothesis found it): under KV pressure
    sharing admits the same sequences but the newest is preempted later, with a longer
    context to recompute, so the rollout's memory-bound time is 3e-6 longer; a list-scheduling
    effect of vLLM's preempt-the-newest rule, not a cost of sharing itself."""
    roof, cost, block = Roofline(H100, 1, Dtype.BF16), _cost(112), 16
    lengths = (49, 82, 49)

    def run(s: PrefixShare | None):
        kv = Paged(400 - 400 % block, block, share=s)
        return timeline(ARCH, 112, lengths, 64, cost, roof, None, None, kv)

    on, off = run(PrefixShare(2, block, same_step=True)), run(None)
    assert on.preemptions == off.preemptions == 1
    assert on.recompute_flops > off.recompute_flops
    assert off.time.bound_s < on.time.bound_s < off.time.bound_s * (1 + 1e-5)


def test_the_switch_and_the_engines_defaults():
    assert EngineSpec().shares_prefix  # vLLM V1: enable_prefix_caching defaults to True
    assert EngineSpec(kind="sglang").shares_prefix  # radix cache unless --disable-radix-cache
    assert not EngineSpec(prefix_caching=False).shares_prefix
    assert not EngineSpec(kind="hf").shares_prefix  # HF generate caches nothing across samples
    with pytest.raises(ValueError, match="prefix caching with engine hf"):
        EngineSpec(kind="hf", prefix_caching=True)
    bad = CliRunner().invoke(app, ["grpo", "-m", "llama-3.1-8b", "--engine", "hf",
                                   "--prefix-caching"])  # fmt: skip
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert "--prefix-caching applies to vllm and sglang" in bad.output


def _generation(args: list[str]) -> dict:
    out = CliRunner().invoke(app, [*args, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)["stages"]["generation"]


def test_the_cli_switch_moves_grpo_but_not_ppo():
    on = _generation(["grpo", "-m", "llama-3.1-8b", "-K", "8"])
    off = _generation(["grpo", "-m", "llama-3.1-8b", "-K", "8", "--no-prefix-caching"])
    assert on["work_flops"] < off["work_flops"]
    # one sample per prompt (PPO's default K = 1): nothing to share
    ppo = ["ppo", "-m", "llama-3.1-8b"]
    assert _generation(ppo)["work_flops"] == _generation([*ppo, "--no-prefix-caching"])[
        "work_flops"]


# --- the importers read the frameworks' keys -------------------------------------------------


def _prefix_flag(q) -> str | None:  # noqa: ANN001
    flags = dict(q.flags)
    return next((f for f in ("--prefix-caching", "--no-prefix-caching") if f in flags), None)


def test_importers_read_the_prefix_caching_keys():
    from pathlib import Path

    from rlmcost.frameworks.nemo_rl import import_nemo_rl
    from rlmcost.frameworks.openrlhf import import_openrlhf
    from rlmcost.frameworks.presets import get_preset
    from rlmcost.frameworks.trl import import_trl
    from rlmcost.frameworks.verl import import_verl

    data = Path(__file__).parent / "data" / "frameworks"
    key = "actor_rollout_ref.rollout.enable_prefix_caching"
    # verl rollout.yaml: enable_prefix_caching True (b25bb7d4f): the engine's default
    assert _prefix_flag(import_verl(data / "verl_grpo.yaml")) is None
    assert _prefix_flag(import_verl(data / "verl_grpo.yaml", [f"+{key}=false"])) == (
        "--no-prefix-caching")
    # NeMo RL: None -> on for compute capability >= 8; an explicit value is read
    nemo = data / "nemo_rl_grpo_math.yaml"
    v = "policy.generation.vllm_cfg.enable_prefix_caching"
    assert _prefix_flag(import_nemo_rl(nemo)) is None
    assert _prefix_flag(import_nemo_rl(nemo, [f"+{v}=false"])) == "--no-prefix-caching"
    # TRL GRPOConfig vllm_enable_prefix_caching: True
    trl = data / "trl_grpo.yaml"
    assert _prefix_flag(import_trl(trl)) is None
    assert _prefix_flag(import_trl(trl, ["vllm_enable_prefix_caching=false"])) == (
        "--no-prefix-caching")
    # OpenRLHF: --enable_prefix_caching store_true, off by default (the preset says so)
    lines = (data / "openrlhf_ppo_ray.args").read_text().splitlines()
    argv = " ".join(ln for ln in lines if ln and not ln.startswith("#")).split()
    assert _prefix_flag(import_openrlhf(argv)) is None
    assert _prefix_flag(import_openrlhf([*argv, "--enable_prefix_caching"])) == (
        "--prefix-caching")
    orlhf = {d.field: d.value for d in get_preset("openrlhf").defaults}
    assert orlhf["engine.prefix_caching"] is False


def test_the_fast_path_keys_on_the_switch():
    """Group estimates kept by ``placement.group_key`` serve a Run only with its own prefix
    caching: the fast evaluation of both settings equals the plain one, and they differ."""
    from rlmcost import memo
    from rlmcost.evaluation.batch import evaluate_many
    from rlmcost.evaluation.deployment import evaluate_deployment
    from rlmcost.reports.estimate import run_of

    on = run_of("grpo", "llama-3.2-1b", hardware="h100-sxm")
    off = on.replace(deployment={"engine": {"prefix_caching": False}})
    fast = [e.to_json() for e in evaluate_many([on, off, on])]
    with memo.plain():
        plain = [evaluate_deployment(r).to_json() for r in (on, off, on)]
    assert [json.dumps(j, sort_keys=True, default=repr) for j in fast] == [
        json.dumps(j, sort_keys=True, default=repr) for j in plain]
    assert fast[0]["work_flops"] < fast[1]["work_flops"] == plain[1]["work_flops"]


def test_a_runs_command_line_states_the_switch():
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.reports.estimate import run_of
    from rlmcost.run.command import to_command

    base = run_of("grpo", "llama-3.2-1b", hardware="h100-sxm")
    assert "prefix-caching" not in to_command(base)  # the engine's default
    off = base.replace(deployment={"engine": {"prefix_caching": False}})
    line = to_command(off)
    assert "--no-prefix-caching" in line
    again = run_from_argv("grpo", line.split()[2:])
    assert again.deployment.engine.prefix_caching is False


def test_a_streaming_rollout_shares_the_prompt_too():
    # verl's fully-async partial rollout: the stream's timelines prefill a group's prompt once.
    # The split is given: searched, each side picks its own (fits, then fastest), and the
    # generation phases of two splits do not compare.
    args = ["grpo", "-m", "llama-3.1-8b", "--partial-rollout", "--framework", "verl", "--gpus",
            "16", "--placement", "async", "--staleness", "1", "-S", "2048",
            "--groups", "rollout=8,actor=8", "--json"]
    on = json.loads(CliRunner().invoke(app, args).output)
    off = json.loads(CliRunner().invoke(app, [*args, "--no-prefix-caching"]).output)
    def generation_s(out: dict) -> float:
        return next(p["time_s"] for p in out["phases"] if p["name"] == "generation")

    assert generation_s(on) < generation_s(off)
    assert any("prefix caching" in n for n in on["notes"])
    assert not any("prefix caching" in n for n in off["notes"])
