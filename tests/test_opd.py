"""On-policy distillation (`rlmcost opd`, the teacher role) and NeMo RL's distillation configs.

Sources: GKD (Agarwal et al. 2024, arXiv:2306.13649) and NeMo RL's loop
(nemo_rl/algorithms/distillation.py ``distillation_train`` @7ea279abf): the student generates,
the teacher runs one forward over every sample (``get_topk_logits``), the student trains; no
reference and no old-policy log-prob forward. The configs under tests/data/frameworks/
nemo_rl_distillation are NeMo RL's own at 7ea279abf; slime's OPD (--use-opd) adds the teacher to
its GRPO (examples/on_policy_distillation/README.md @624b824a)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rlmcost
from rlmcost.algorithms.catalog import get_algorithm
from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.algorithms.options import Options
from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.frameworks.slime import import_slime
from rlmcost.perf.nemo_rl_dispatch import TOPK_BYTES_PER_TOKEN

CONFIGS = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_distillation" / "examples" / \
    "configs"  # fmt: skip
KW = {"hardware": "h100-sxm", "gpus": 8, "batch": 64, "prompt_len": 512, "response_len": 1024}


def test_opd_is_generation_a_teacher_forward_and_the_student_update() -> None:
    alg = get_algorithm("opd")
    assert [(i.role, i.kind, i.sequences) for i in alg.invocations] == [
        (Role.ACTOR, Kind.GENERATE, "B*K"), (Role.TEACHER, Kind.FORWARD, "B*K"),
        (Role.ACTOR, Kind.TRAIN, "B*K")]  # fmt: skip
    assert alg.default_group == 1 and not alg.scored  # no reward: no advantage, no ratio
    assert get_algorithm("grpo").scored and get_algorithm("rlvr").scored
    assert Role.TEACHER.head.value == Role.REFERENCE.head.value  # an LM head's log-probs


def test_the_teacher_forward_costs_what_the_same_models_reference_forward_does() -> None:
    """Exact identity: the teacher's forward over B K sequences of S + T tokens is the work of a
    reference forward of the same model over the same tokens (GRPO with that reference)."""
    opd = rlmcost.estimate("opd", "qwen3-1.7b", teacher="qwen3-8b", group=2, framework="none",
                           **KW)  # fmt: skip
    grpo = rlmcost.estimate("grpo", "qwen3-1.7b", ref="qwen3-8b", reward="rule", group=2,
                            framework="none", **KW)  # fmt: skip

    def forward(e: rlmcost.Evaluation, role: str) -> int:
        inv = [i for i in e.to_json()["stages"]["assessment"]["invocations"] if i["role"] == role]
        assert len(inv) == 1
        return inv[0]["work_flops"]

    teacher = forward(opd, "teacher")
    assert isinstance(teacher, int) and teacher == forward(grpo, "reference")
    smaller = rlmcost.estimate("opd", "qwen3-1.7b", teacher="qwen3-4b", group=2,
                               framework="none", **KW)  # fmt: skip
    assert forward(smaller, "teacher") < teacher  # the teacher's size, not the student's
    assert opd.reward.startswith("none: teacher qwen3-8b")


def test_a_teacher_joins_an_online_algorithm_as_slime_runs_opd() -> None:
    """slime's --use-opd (examples/on_policy_distillation/README.md @624b824a): OPD as a KL
    term beside any advantage estimator, the teacher's log-probs of every sample; GRPO keeps
    its own reference and verifier, and gains the teacher's forward, exactly opd's."""
    kw = {**KW, "group": 2, "framework": "none"}
    grpo = rlmcost.estimate("grpo", "qwen3-1.7b", teacher="qwen3-8b", reward="rule", **kw)
    roles = [i["role"] for i in grpo.to_json()["stages"]["assessment"]["invocations"]]
    assert sorted(roles) == ["reference", "teacher", "verifier"]
    opd = rlmcost.estimate("opd", "qwen3-1.7b", teacher="qwen3-8b", **kw)

    def teacher(e: rlmcost.Evaluation) -> int:
        inv = e.to_json()["stages"]["assessment"]["invocations"]
        return next(i["work_flops"] for i in inv if i["role"] == "teacher")

    assert teacher(grpo) == teacher(opd)
    plain = rlmcost.estimate("grpo", "qwen3-1.7b", reward="rule", **kw)
    assert grpo.work_flops == plain.work_flops + teacher(opd)
    with pytest.raises(SpecError, match="dpo samples nothing.*drop --teacher"):
        rlmcost.estimate("dpo", "qwen3-1.7b", teacher="qwen3-8b", **KW)


def test_opd_has_no_reference_to_drop() -> None:
    with pytest.raises(SpecError, match="opd has no reference model; drop --no-kl"):
        rlmcost.estimate("opd", "qwen3-1.7b", teacher="qwen3-8b", options=Options(kl=False),
                         **KW)  # fmt: skip


def test_a_preset_recomputes_no_old_log_probs_for_opd() -> None:
    """NeMo RL's distillation runs no old-policy forward; its GRPO preset's
    --recompute-logprobs is not applied to opd, and says so."""
    e = rlmcost.estimate("opd", "qwen3-1.7b", teacher="qwen3-8b", framework="nemo-rl", **KW)
    names = [p.name for p in e.evaluation.phases]
    assert "teacher log-prob" in names and "old log-prob" not in names and "reference" not in names
    argv = ["opd", "-m", "qwen3-1.7b", "--teacher", "qwen3-8b", "-H", "h100-sxm", "--gpus", "8",
            "--framework", "nemo-rl"]  # fmt: skip
    out = CliRunner().invoke(app, argv)
    assert out.exit_code == 0, out.output
    assert "not applied to opd: --recompute-logprobs" in " ".join(out.output.split())


def test_nemo_rl_distillation_config_imports_as_opd() -> None:
    """distillation_math.yaml: Qwen3-1.7B-Base student, Qwen3-4B teacher, 128 prompts x 1
    generation (its distillation section), 8 GPUs, colocated."""
    q = import_nemo_rl(CONFIGS / "distillation_math.yaml")
    flags = dict(q.flags)
    assert q.algorithm == "opd" and flags["--teacher"] == "Qwen/Qwen3-4B"
    assert (flags["--batch"], flags["--group"], flags["--gpus"]) == (128, 1, 8)
    assert "--kl" not in flags and "--no-kl" not in flags
    assert not any(k.startswith(("distillation.", "teacher.")) for k in q.ignored)
    out = CliRunner().invoke(app, ["import", "nemo-rl", str(CONFIGS / "distillation_math.yaml"),
                                   "--json"])  # fmt: skip
    assert out.exit_code == 0, out.output
    est = json.loads(out.stdout)["estimate"]
    assert est["algorithm"] == "opd" and est["fits"]
    assert est["models"]["teacher"] == "qwen3-4b"  # the built-in of that Hugging Face id


def test_nemo_rl_non_colocated_distillation_keeps_the_teacher_on_the_training_gpus() -> None:
    """The noncolocated recipe: generation on 8 GPUs of its own, student and teacher (a Policy
    on the training cluster, distillation.py) on the other 8."""
    path = CONFIGS / "recipes" / "llm" / \
        "distillation-qwen3-32b-to-4b-base-2n8g-fsdp2tp8-noncolocated.v1.yaml"  # fmt: skip
    q = import_nemo_rl(path)
    assert dict(q.flags)["--groups"] == "rollout=8[tp=1],actor+teacher=8"
    out = CliRunner().invoke(app, ["import", "nemo-rl", str(path), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["estimate"]["fits"]


def test_cross_tokenizer_off_policy_distillation_is_refused_with_the_reason() -> None:
    with pytest.raises(SpecError, match="off-policy distillation config.*generates nothing"):
        import_nemo_rl(CONFIGS / "xtoken_off_policy_distillation.yaml")


def _slime_args() -> list[str]:
    lines = (CONFIGS.parents[2] / "slime_qwen3-4B.args").read_text().splitlines()
    return shlex.split(" ".join(ln for ln in lines if ln and not ln.startswith("#")))


def test_slime_megatron_opd_is_a_teacher_of_the_actors_architecture_beside_it() -> None:
    """slime --use-opd --opd-type megatron (examples/on_policy_distillation @624b824a): the
    teacher's checkpoint loaded into the actor's Megatron model (its architecture), its forward
    on the actor's GPUs, its weights in host memory between forwards."""
    args = _slime_args()
    q = import_slime([*args, "--use-opd", "--opd-type", "megatron", "--opd-teacher-load", "/t"])
    flags = dict(q.flags)
    assert flags["--teacher"] == flags["--model"] and "--offload-idle" in flags
    assert not [k for k in q.ignored if "opd" in k]
    apart = [a for a in args if a != "--colocate"] + ["--rollout-num-gpus", "4"]
    q = import_slime([*apart, "--use-opd", "--opd-type", "megatron", "--opd-teacher-load", "/t"])
    assert dict(q.flags)["--groups"].endswith("actor+reference+teacher=8")
    served = import_slime([*args, "--use-opd", "--opd-type", "sglang"])  # a server outside
    assert "--teacher" not in dict(served.flags)
    assert any("outside slime's GPUs" in n for n in served.notes)


def test_nemo_rl_moves_the_teachers_top_k_through_the_driver() -> None:
    """NeMo RL: get_topk_logits returns torch.topk of the fp32 logits (fp32 values, int64
    indices; automodel/train.py TopkLogitsPostProcessor @7ea279abf), k = 64
    (DistillationConfig), from every rank of a shard, and the student's train call carries them:
    64 x (4 + 8) = 768 bytes a padded token each way, by hand below (64 samples of 2,048 tokens
    at TP 1: one rank a shard)."""
    assert TOPK_BYTES_PER_TOKEN == 64 * (4 + 8)
    e = rlmcost.estimate("opd", "qwen3-1.7b", teacher="qwen3-4b", gpus=8, framework="nemo-rl",
                         hardware="h100-sxm")  # fmt: skip
    calls = {t.what.split(":")[0]: t.bytes for g in e.evaluation.groups for t in g.transfers
             if t.what.startswith("driver data of")}  # fmt: skip
    tokens = 64 * 2048
    assert calls["driver data of teacher forward"] == tokens * (8 + 8 + 4 + 4 + 768)
    assert calls["driver data of actor train"] == tokens * (32 + 768)


def test_nemo_rl_holds_the_teacher_in_fp32_as_its_dtensor_worker_loads_it() -> None:
    """NeMo RL's teacher is a Policy of its own (distillation.py), which the DTensor worker loads
    in fp32 (nemo_rl/models/automodel/setup.py ``torch_dtype=torch.float32`` @7ea279abf) and
    FSDP2 shards over the 8 GPUs: 4 B a parameter of the rank's shard while it runs. Qwen3-8B
    has 8,190,735,360 parameters (transformers' Qwen3ForCausalLM built from its config, as
    tests/test_registry_configs.py checks the built-in); the teacher's forward is the
    assessment stage's peak, the student's states on the host (offload_before_refit)."""
    shard = -(-8_190_735_360 // 8)

    def weights(**kw: object) -> int:
        e = rlmcost.estimate("opd", "qwen3-1.7b", teacher="qwen3-8b", **KW, **kw)
        stage = e.to_json()["stages"]["assessment"]
        assert stage["peak_invocation"].startswith("teacher forward")
        return stage["memory_breakdown_bytes"]["weights"]

    assert weights(framework="nemo-rl") == 4 * shard
    # the student stored in bf16 (Megatron-core's Float16Module): the teacher too
    assert weights(framework="nemo-rl", deployment={"train": {"param_dtype": "bf16"}}) == 2 * shard


MOPD = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_nemotron3_super" / "examples" / \
    "configs" / "recipes" / "llm" / "mopd-qwen3-1.7b-3n8g-megatron-pack.yaml"  # fmt: skip
"""NeMo RL's MOPD recipe at 7ea279abf (its defaults, grpo_math_1B.yaml, beside it)."""


def test_nemo_rl_mopd_puts_the_teacher_on_gpus_taken_from_the_policy() -> None:
    """docs/about/algorithms/mopd.md: 'the reference 3-node recipe lays out: 1 node policy + 1
    node vLLM generation + 1 node teacher'; the teacher's worker group at TP 2
    (default_teacher_cfg) scores every sample beside GRPO's own passes (no KL here)."""
    q = import_nemo_rl(MOPD)
    flags = dict(q.flags)
    assert q.algorithm == "rlvr" and flags["--teacher"] == "Qwen/Qwen3-1.7B"
    assert flags["--groups"] == "rollout=8[tp=2],actor=8,teacher=8[tp=2]"
    assert not any(k.startswith("on_policy_distillation") for k in q.ignored)
    out = CliRunner().invoke(app, ["import", "nemo-rl", str(MOPD), "--json"])
    assert out.exit_code == 0, out.output
    est = json.loads(out.stdout)["estimate"]
    assert est["fits"] and est["models"]["teacher"] == "qwen3-1.7b"
    phases = {p["name"] for p in est["phases"]}
    assert {"teacher log-prob", "old log-prob", "update actor"} <= phases


def test_a_teacher_beside_grpo_returns_log_probs_not_the_top_k() -> None:
    """MOPD (and slime's --use-opd) need the teacher's log-probability of each sampled token
    only (mopd.md: 'rather than the full vocabulary distribution'): its driver data is a
    forward's (4 B a token back) and the student's call carries no top-k; NeMo RL's
    distillation.py (opd) keeps its top-64 (test above)."""
    kw = {"teacher": "qwen3-4b", "gpus": 8, "framework": "nemo-rl", "hardware": "h100-sxm"}
    e = rlmcost.estimate("rlvr", "qwen3-1.7b", batch=32, group=2, **kw)
    calls = {t.what.split(":")[0]: t for g in e.evaluation.groups for t in g.transfers
             if t.what.startswith("driver data of")}  # fmt: skip
    teacher, train = calls["driver data of teacher forward"], calls["driver data of actor train"]
    assert "top-" not in teacher.what and "log-probs back" in teacher.what
    tokens = 64 * 2048  # 64 samples of 2,048 tokens at TP 1: one rank a shard
    assert teacher.bytes == tokens * (8 + 8 + 4 + 4 + 4)
    assert train.bytes == tokens * 32


@pytest.mark.parametrize(("override", "match"), [
    ("on_policy_distillation.teacher_model_by_agent_name.code=Qwen/Qwen3-4B", "2 teacher worker"),
    ("on_policy_distillation.non_colocated_teachers.enabled=false", "no teacher would run"),
    ("on_policy_distillation.non_colocated_teachers.default_teacher_cfg.num_nodes=2",
     "leave none of the policy's 16"),
])  # fmt: skip
def test_nemo_rl_mopd_refuses_what_it_cannot_price(override: str, match: str) -> None:
    """Several teacher checkpoints (each sample's teacher by its agent, shares unknown),
    teachers without GPUs of their own (none scores: trajectory_collector.py) and teachers that
    take every policy node (grpo.py refuses it) are errors that say so."""
    with pytest.raises(SpecError, match=match):
        import_nemo_rl(MOPD, [override])
    q = import_nemo_rl(MOPD, ["on_policy_distillation.enabled=false"])  # plain async GRPO
    assert "--teacher" not in dict(q.flags) and dict(q.flags)["--groups"] == \
        "rollout=8[tp=2],actor=16"  # fmt: skip
