"""NeMo RL import: multi-teacher on-policy distillation (MOPD) inside async GRPO, the
``on_policy_distillation`` block of a GRPO config, as ``--teacher`` on GPUs of its own.

What NeMo RL does (docs/about/algorithms/mopd.md, nemo_rl/algorithms/opd.py and grpo.py at
7ea279abf): the GRPO trainer runs with ``adv_estimator: opd``; each teacher checkpoint of
``teacher_model_by_agent_name`` (aliases of one checkpoint share one group when
``deduplicate_shared_teacher_checkpoints``) is a ``TeacherWorkerGroup`` (nemo_rl/models/policy/
teacher_worker_group.py): Megatron-core in inference mode (no optimizer, no reference, the
checkpoint loaded once, ``get_logprobs`` only), on a Ray cluster of its own of
``num_nodes`` x ``gpus_per_node`` GPUs (``non_colocated_teachers.default_teacher_cfg`` and
``teacher_overrides``), whose nodes grpo.py takes from the policy's (``policy_nodes -=
opd_teacher_nodes``). The async trajectory collector asks the teacher for the log-probability
of every sampled token as each rollout group returns (async_utils/trajectory_collector.py), so
the teacher scores every sample once, beside generation; the student's ``prev_logprobs`` are
computed as GRPO's (``seq_logprob_error_threshold``: ``assert_prev_logprobs_available``).
Teachers are fed the policy's sequence-packing settings (``cfg = deepcopy(policy_config)``).

So the query is GRPO's (``rlvr``) with ``--teacher MODEL`` and a ``teacher=N[tp=...]`` group
taken from the policy's GPUs. One teacher checkpoint is priced; several distinct ones (each
sample scored by the one its agent maps to, in shares the config does not give) are refused,
and so are teachers without GPUs of their own (only the non-colocated worker groups score:
trajectory_collector.py reads ``teacher_worker_groups``).
"""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery

OPD = "on_policy_distillation"
RESOURCE_DEFAULTS = {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
                     "context_parallel_size": 1, "expert_model_parallel_size": 1,
                     "num_nodes": 1, "gpus_per_node": 8}  # fmt: skip
"""``TeacherResourceConfig``'s defaults (nemo_rl/algorithms/opd.py at 7ea279abf)."""
BRACKET = {"tensor_model_parallel_size": "tp", "pipeline_model_parallel_size": "pp",
           "context_parallel_size": "cp", "expert_model_parallel_size": "ep"}  # fmt: skip

IGNORED = (f"{OPD}.default_teacher_alias", f"{OPD}.strict_agent_name_match",
           "grpo.adv_estimator",
           "grpo.seq_logprob_error_threshold")  # fmt: skip
"""Keys that change no priced cost: the routing of agents to teachers (one checkpoint priced)
and the advantage's form (the teacher's log-probs replace the reward's, same passes)."""


def _teacher_models(r: Reader) -> dict[str, str]:
    """Alias -> checkpoint of ``teacher_model_by_agent_name`` (references resolved), in the
    config's order (``create_teacher_configs_from_opd_config`` keeps a checkpoint's first)."""
    prefix = f"{OPD}.teacher_model_by_agent_name."
    return {k.removeprefix(prefix): str(r.raw(k)) for k in r.flat if k.startswith(prefix)}


def mopd_query(r: Reader, q: ImportedQuery) -> None:
    """``--teacher`` and its GPUs for an enabled ``on_policy_distillation`` block (module
    docstring); nothing when the block is null or disabled. Call after the generation's
    ``--groups`` are set (:func:`~rlmcost.frameworks.nemo_rl_engine.import_engine`)."""
    r.raw(OPD)  # grpo_math_1B.yaml's ``on_policy_distillation: null``
    if not r.flag(f"{OPD}.enabled", False):
        return
    models = _teacher_models(r)
    distinct = sorted(set(models.values()))
    if not r.flag(f"{OPD}.deduplicate_shared_teacher_checkpoints", True) and len(models) > 1:
        distinct = list(models.values())  # a worker group per alias
    if len(distinct) != 1:
        raise SpecError(f"{r.where}: {OPD}.teacher_model_by_agent_name maps to "
                        f"{len(distinct)} teacher worker groups ({', '.join(distinct) or 'none'}"
                        "): rlmcost prices one teacher, and each sample's teacher follows its "
                        "agent in shares the config does not give; keep one checkpoint")
    apart = f"{OPD}.non_colocated_teachers"
    if not r.flag(f"{apart}.enabled", False):
        raise SpecError(f"{r.where}: {apart}.enabled is false: NeMo RL scores MOPD samples on "
                        "non-colocated teacher worker groups only (async_utils/"
                        "trajectory_collector.py), so no teacher would run; enable it")  # fmt: skip
    groups = dict(q.flags).get("--groups")
    if not groups:
        raise SpecError(f"{r.where}: {OPD} runs on async GRPO with generation on GPUs of its "
                        "own (grpo.py: non-colocated teachers require async GRPO); set "
                        "grpo.async_grpo.enabled and policy.generation.colocated.enabled false")
    alias = next(iter(models))
    res = {k: r.integer(f"{apart}.teacher_overrides.{alias}.{k}",
                        r.integer(f"{apart}.default_teacher_cfg.{k}", v))
           for k, v in RESOURCE_DEFAULTS.items()}  # fmt: skip
    r.text(f"{apart}.default_teacher_cfg.precision", "bf16", ("bf16",))
    r.raw(f"{apart}.default_teacher_cfg.micro_batch_size")
    gpus = res["num_nodes"] * res["gpus_per_node"]
    entries = groups.split(",")
    trainer = next(i for i, e in enumerate(entries) if e.split("=")[0].split("+")[0] == "actor")
    name, count = entries[trainer].split("=", 1)
    left = int(count) - gpus
    if left < 1:
        raise SpecError(f"{r.where}: the teacher's {gpus} GPUs ({apart}: num_nodes x "
                        f"gpus_per_node) leave none of the policy's {count} (grpo.py refuses "
                        "it: policy_nodes must be > 0)")  # fmt: skip
    layout = ";".join(f"{BRACKET[k]}={res[k]}" for k in BRACKET if res[k] > 1)
    entries[trainer] = f"{name}={left}"
    teacher = f"teacher={gpus}" + (f"[{layout}]" if layout else "")
    q.set("--teacher", distinct[0])
    q.convert(f"{apart}.default_teacher_cfg (num_nodes x gpus_per_node = {gpus})", "--groups",
              ",".join([*entries, teacher]), "the teacher's Megatron-core worker group on "
              "GPUs of its own, taken from the policy's (grpo.py, opd.py)")  # fmt: skip
    q.note(f"{OPD} (MOPD, docs/about/algorithms/mopd.md): the teacher {distinct[0]} scores "
           "every sample's tokens (one forward, its log-probs of the sampled tokens) on its own "
           f"{gpus} GPUs as each rollout group returns; GRPO's passes otherwise, the student's "
           "log-probs included (adv_estimator opd)")  # fmt: skip
