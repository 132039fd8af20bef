"""Multi-token prediction trained with the policy (``--mtp-layers``, ``placement.mtp``).

Independent sources: the MTP module's shape, DeepSeek-V3 report (arXiv 2412.19437) §2.2 and
Megatron-core ``multi_token_prediction.py`` @d98e8a64 (hnorm, enorm, ``eh_proj`` [2d -> d], one
Transformer layer, its final norm, the shared output head); one Qwen3-8B decoder layer's
parameters counted by transformers 5.24's ``Qwen3ForCausalLM`` built from its config (a
two-layer less a one-layer model, on the meta device); Qwen3-8B's config.json (d 4096, 32
heads and 8 KV heads of 128, d_ff 12288, vocabulary 151,936, untied); GEMM FLOPs counted by
hand at 2 m n k (one add or one multiply = 1 FLOP, FlopCounterMode's convention) and the
attention's 4 h d_h per query-key pair over every pair (``AttnCounting.FULL``); NeMo RL's
Nemotron 3 Super recipe keys (grpo-nemotron3-super-120BA12B-16n8g-megatron.yaml @7ea279abf:
mtp_num_layers 5, mtp_use_repeated_layer, mtp_detach_heads); slime's
``--enable-mtp-training`` / ``--mtp-num-layers`` (slime/utils/arguments.py @624b824a).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.cli.validate import run_from_argv
from rlmcost.errors import SpecError
from rlmcost.evaluation.query import evaluate
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.frameworks.slime import import_slime

D, H, KV, DH, FF, V = 4096, 32, 8, 128, 12288, 151936  # Qwen3-8B config.json
B, K, S, T = 8, 4, 512, 1024
TOKENS = B * K * (S + T)  # every sequence at T: --length-dist fixed
QUERY = ["-m", "qwen3-8b", "-H", "h100", "--gpus", "8", "-B", str(B), "-K", str(K), "-S",
         str(S), "-T", str(T), "--framework", "nemo-rl", "--tp", "4", "--zero", "1",
         "--param-dtype", "bf16"]  # NeMo RL's Megatron policy  # fmt: skip
NEMO = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"


def _jobs(*extra: str) -> dict[tuple[Role, Kind], object]:
    est = evaluate(run_from_argv("grpo", [*QUERY, *extra]))
    assert est.evaluation is not None
    return {(j.task.role, j.task.kind): j for g in est.evaluation.groups for j in g.jobs}


def _layer_forward_flops(seq: int) -> int:
    """One Qwen3-8B layer and the output head over one sequence, forward, by hand."""
    gemms = 2 * D * (H * DH + 2 * KV * DH) + 2 * H * DH * D + 3 * 2 * D * FF
    return seq * (gemms + 2 * D * V) + seq * seq * 4 * H * DH


def test_each_depth_trains_a_layer_the_head_and_the_projection() -> None:
    base, mtp = _jobs(), _jobs("--mtp-layers", "2")
    per_depth = B * K * 3 * _layer_forward_flops(S + T) + 3 * 4 * D * D * TOKENS
    train = (Role.ACTOR, Kind.TRAIN)
    assert mtp[train].work_flops - base[train].work_flops == 2 * per_depth
    # the log-prob and reference forwards run it too (Megatron outside inference mode)
    forward = B * K * _layer_forward_flops(S + T) + 4 * D * D * TOKENS
    for role in (Role.ACTOR, Role.REFERENCE):
        key = (role, Kind.FORWARD)
        assert mtp[key].work_flops - base[key].work_flops == 2 * forward
    generate = (Role.ACTOR, Kind.GENERATE)
    assert mtp[generate].work_flops == base[generate].work_flops  # the engine drafts nothing
    # the step model runs the block in the last stage's micro-batches (perf.mtp_pass)
    for key in (train, (Role.ACTOR, Kind.FORWARD), (Role.REFERENCE, Kind.FORWARD)):
        assert mtp[key].predicted_s > base[key].predicted_s >= base[key].time.bound_s
        assert mtp[key].predicted_s >= mtp[key].time.bound_s


def test_detached_heads_skip_the_heads_weight_gradient_and_repeats_share_weights() -> None:
    one, detached = _jobs("--mtp-layers", "3"), _jobs("--mtp-layers", "3", "--mtp-detach-heads")
    train = (Role.ACTOR, Kind.TRAIN)
    assert one[train].work_flops - detached[train].work_flops == 3 * 2 * D * V * TOKENS
    repeated = _jobs("--mtp-layers", "3", "--mtp-repeated")
    assert repeated[train].work_flops == one[train].work_flops  # compute: every depth
    assert repeated[train].own.weights < one[train].own.weights


def _qwen3_8b_layer_params() -> int:
    """One Qwen3-8B decoder layer's parameters: transformers' Qwen3ForCausalLM of two layers
    less one, built on the meta device from the config's shape."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")

    def count(layers: int) -> int:
        cfg = transformers.Qwen3Config(
            hidden_size=D, num_attention_heads=H, num_key_value_heads=KV, head_dim=DH,
            intermediate_size=FF, vocab_size=V, num_hidden_layers=layers,
            tie_word_embeddings=False,
        )  # fmt: skip
        with torch.device("meta"):
            model = transformers.Qwen3ForCausalLM(cfg)
        return sum(p.numel() for p in model.parameters())

    return count(2) - count(1)


def test_mtp_weights_are_one_layers_tp_shard_plus_projection_and_norms() -> None:
    layer = _qwen3_8b_layer_params()
    norms = 2 * D + 2 * DH  # input and post-attention RMSNorms, q_norm and k_norm: replicated
    shard = (layer - norms) // 4 + norms  # TP 4
    per_module = shard + 2 * D * D // 4 + 3 * D  # eh_proj's column shard; hnorm, enorm, final
    base, mtp = _jobs(), _jobs("--mtp-layers", "2")
    train = (Role.ACTOR, Kind.TRAIN)
    assert mtp[train].own.weights - base[train].own.weights == 2 * per_module * 2  # bf16
    assert mtp[train].own.activations > base[train].own.activations
    forward = (Role.ACTOR, Kind.FORWARD)  # its weights sharded as the forward's layout shards
    added = mtp[forward].own.weights - base[forward].own.weights  # the model's (ZeRO-3 here)
    assert added * base[train].own.weights == 2 * per_module * 2 * base[forward].own.weights
    assert mtp[forward].own.activations == base[forward].own.activations


def test_mtp_runs_in_the_policys_passes_alone_ideal_or_not() -> None:
    ideal = ["-m", "qwen3-8b", "-H", "h100", "--gpus", "8", "--ideal"]
    a, b = (evaluate(run_from_argv("grpo", [*ideal, *more])).evaluation
            for more in ((), ("--mtp-layers", "1")))  # fmt: skip
    assert a is not None and b is not None
    assert sum(j.work_flops for g in b.groups for j in g.jobs) > \
        sum(j.work_flops for g in a.groups for j in g.jobs)  # the model's compute  # fmt: skip
    ppo = ["-m", "qwen3-8b", "-H", "h100", "--gpus", "8", "-B", "8", "-K", "1", "-S", "512",
           "-T", "512", "--critic", "qwen3-8b", "--framework", "nemo-rl", "--zero", "1"]
    a = evaluate(run_from_argv("ppo", ppo)).evaluation
    b = evaluate(run_from_argv("ppo", [*ppo, "--mtp-layers", "1"])).evaluation
    assert a is not None and b is not None
    work = [{(j.task.role, j.task.kind): j.work_flops for g in e.groups for j in g.jobs}
            for e in (a, b)]  # fmt: skip
    assert work[0][(Role.CRITIC, Kind.TRAIN)] == work[1][(Role.CRITIC, Kind.TRAIN)]
    assert work[0][(Role.ACTOR, Kind.TRAIN)] < work[1][(Role.ACTOR, Kind.TRAIN)]


def test_a_model_whose_mtp_layer_shape_is_unknown_is_refused_with_the_flag() -> None:
    with pytest.raises(SpecError, match="--mtp-layers"):
        evaluate(run_from_argv("grpo", ["-m", "gemma-3-4b", "-H", "h100", "--gpus", "8",
                                        "--framework", "slime", "--mtp-layers", "1"]))


def test_a_hugging_face_trainer_builds_no_mtp_block() -> None:
    # NeMo RL's DTensor policy (its preset at ZeRO-3) and verl's FSDP workers run transformers
    # models, which build no MTP block (hf_qwen3.py: _keys_to_ignore_on_load_unexpected mtp.*)
    for framework, more in (("nemo-rl", ["--zero", "3"]), ("verl", [])):
        with pytest.raises(SpecError, match="Hugging Face model"):
            evaluate(run_from_argv("grpo", ["-m", "qwen3-8b", "-H", "h100", "--gpus", "8",
                                            "--framework", framework, *more,
                                            "--mtp-layers", "1"]))  # fmt: skip


def test_the_frameworks_keys_set_the_flags() -> None:
    mc = "policy.megatron_cfg"
    q = import_nemo_rl(NEMO, [f"{mc}.enabled=true", "policy.dtensor_cfg.enabled=false",
                              f"{mc}.mtp_num_layers=5", f"{mc}.mtp_use_repeated_layer=true",
                              f"{mc}.mtp_detach_heads=true"])  # fmt: skip
    assert [f for f in q.flags if "mtp" in f[0]] == [
        ("--mtp-layers", 5), ("--mtp-repeated", None), ("--mtp-detach-heads", None)]
    q = import_nemo_rl(NEMO, [f"{mc}.enabled=true", "policy.dtensor_cfg.enabled=false",
                              f"{mc}.mtp_num_layers=0", f"{mc}.mtp_use_repeated_layer=true"])
    assert not [f for f in q.flags if "mtp" in f[0]]
    slime = ["--hf-checkpoint", "/root/Qwen3-4B", "--rollout-batch-size", "8",
             "--n-samples-per-prompt", "4", "--actor-num-gpus-per-node", "4",
             "--rollout-num-gpus-per-engine", "2", "--rollout-num-gpus", "4"]  # fmt: skip
    q = import_slime([*slime, "--enable-mtp-training", "--mtp-num-layers", "1"])
    assert ("--mtp-layers", 1) in q.flags
    q = import_slime([*slime, "--mtp-num-layers", "1"])  # built, not trained: said
    assert not [f for f in q.flags if "mtp" in f[0]]
    assert any("--enable-mtp-training" in n for n in q.notes)


def test_verls_megatron_actor_trains_its_one_mtp_layer() -> None:
    """verl b178a3c: model.mtp.enable + enable_train on a Megatron actor trains the checkpoint's
    layer (weight_converter.py asserts mtp_num_layers == 1); an FSDP actor does not."""
    from rlmcost.frameworks.verl import import_verl

    verl = Path(__file__).parent / "data" / "frameworks" / "verl_grpo.yaml"
    mtp = [f"actor_rollout_ref.model.mtp.{k}=true" for k in ("enable", "enable_train")]
    q = import_verl(verl, ["actor_rollout_ref.actor.strategy=megatron", *mtp])
    assert ("--mtp-layers", 1) in q.flags
    q = import_verl(verl, ["actor_rollout_ref.actor.strategy=fsdp", *mtp])
    assert not [f for f in q.flags if "mtp" in f[0]]


def test_a_moe_blocks_host_floor_holds_each_depth_and_micro_batch() -> None:
    """perf/moe_host.py MOE_LAYER_HOST_S (Megatron-Bridge's Qwen3-30B-A3B micro-batch-1 rows):
    the MTP block of a MoE model is an eager Megatron-core MoE layer, floored per depth and
    micro-batch in training."""
    from rlmcost.perf.moe_host import MOE_LAYER_HOST_S

    args = ["-m", "qwen3-30b-a3b", "-H", "h100", "--gpus", "8", "-B", "4", "-K", "2", "-S",
            "256", "-T", "256", "--framework", "slime", "--ep", "8", "--mtp-layers", "3"]
    jobs = []
    for extra in ([], ["--mtp-layers", "3"]):
        est = evaluate(run_from_argv("grpo", args[:-2] + extra))
        assert est.evaluation is not None
        jobs.append(next(j for g in est.evaluation.groups for j in g.jobs
                         if j.task.kind is Kind.TRAIN and j.task.role is Role.ACTOR))  # fmt: skip
    floor = 3 * jobs[1].micro_batches * MOE_LAYER_HOST_S.value  # at least one optimizer step
    assert jobs[1].predicted_s - jobs[0].predicted_s >= floor * 0.999999


@pytest.mark.parametrize("apart", [False, True])
def test_the_refit_carries_the_trained_mtp_modules(apart: bool) -> None:
    """NeMo RL refits the policy's MTP block into the engines' drafter when it trains one
    (vllm_backend.py ``_mtp_weights_from_refit`` @7ea279abf): the refit's bytes grow by the
    modules' parameters, whole, in bf16 (one module when repeated)."""
    module = _qwen3_8b_layer_params() + 2 * D * D + 3 * D  # eh_proj [2d -> d], three norms
    where = ["--groups", "rollout=4[tp=1],actor+reference=4"] if apart else []

    def synced(*more: str) -> int:
        est = evaluate(run_from_argv("grpo", [*QUERY, *where, *more]))
        assert est.evaluation is not None
        syncs = [t.bytes for g in est.evaluation.groups for t in g.transfers
                 if t.kind == "weight-sync"] or [t.bytes for t in est.evaluation.syncs]
        assert len(syncs) == 1
        return syncs[0]

    base = synced()
    assert synced("--mtp-layers", "2") - base == 2 * module * 2
    assert synced("--mtp-layers", "2", "--mtp-repeated") - base == module * 2



def test_the_output_says_what_mtp_adds() -> None:
    est = evaluate(run_from_argv("grpo", [*QUERY, "--mtp-layers", "2", "--mtp-repeated"]))
    notes = [n for n in est.notes if n.startswith("multi-token prediction")]
    assert len(notes) == 1 and "one module run at every depth" in notes[0]
    assert not [n for n in evaluate(run_from_argv("grpo", QUERY)).notes
                if n.startswith("multi-token prediction")]  # fmt: skip
