"""NeMo RL's DTensor policy worker, v1 or v2 (``policy.dtensor_cfg._v2``), and how each runs
full recomputation (``dtensor_cfg.activation_checkpointing``).

Which worker: ``lm_policy.py`` builds ``DTensorPolicyWorkerV2`` where ``dtensor_cfg._v2`` is
true, else the v1 ``DTensorPolicyWorker`` (``config.get("dtensor_cfg", {}).get("_v2", False)``,
``nemo_rl/models/policy/lm_policy.py`` at v0.4.0 through v0.7.0 and @7ea279abf: false when
absent). ``examples/configs/grpo_math_1B.yaml`` sets ``_v2: true`` from v0.4.0 on (v0.3.0 has
no such key), so a recipe that inherits it (``defaults:``, merged by the importer) runs v2.

The v1 worker wraps each layer's ``self_attn``, ``mlp`` and two norms apart
(``nemo_rl/models/dtensor/parallelize.py``; :mod:`rlmcost.perf.module_ckpt`): the preset's
``Behaviour.hf_module_ckpt``. The v2 worker builds the model with NeMo Automodel
(``model_class.from_pretrained(..., activation_checkpointing=...)``,
``nemo_rl/models/automodel/setup.py`` at v0.6.0 / v0.7.0; in the worker itself at v0.4.0 /
v0.5.0), whose parallelizer checkpoints by the model's class:

* **A transformers class** (``nemo_automodel/components/distributed/parallelizer.py``
  ``DefaultParallelizationStrategy.parallelize`` at Automodel 92635e74, NeMo RL v0.6.0's pin,
  and 24b47e85, v0.7.0's and @7ea279abf's, lines 233-283): where the layers are a transformers
  ``GradientCheckpointingLayer`` of a model that supports it (transformers 5.3.0 pinned at
  v0.6.0, >= 5.5 at v0.7.0; every decoder layer rlmcost models), Automodel calls
  ``model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})``:
  each layer checkpointed whole by torch's reentrant checkpoint, which reruns the whole layer
  (no early stop): ``--no-module-ckpt --no-recompute-early-stop``.
* **An Automodel class** (its registry, ``nemo_automodel/_transformers/registry.py``
  ``MODEL_ARCH_MAPPING`` at both pins, chosen by ``config.architectures[0]`` unless
  ``automodel_kwargs.force_hf``): NeMo RL's ``_maybe_set_force_hf`` (setup.py at v0.6.0 and
  v0.7.0) sets ``force_hf`` where the class's state-dict adapter lacks
  ``convert_single_tensor_to_hf``, which Llama's and Qwen2's lack at both pins (their
  ``state_dict_adapter.py``): those two run as transformers classes. The MoE classes keep
  theirs (:data:`AUTOMODEL_CLASSES`: Qwen3-MoE, DeepSeek-V3 (and Kimi-K2, whose config.json
  names ``DeepseekV3ForCausalLM``), GLM-4-MoE, Qwen3-Next, GPT-OSS (``GptOssForCausalLM``,
  components/models/gpt_oss/, an ``MoEFSDPSyncMixin`` as DeepSeek-V3's), and at 24b47e85
  GLM-4.7-Flash, MiniMax-M2, Qwen3.5-MoE, Qwen3-VL-MoE and Nemotron-H; their adapters
  implement it), parallelized by ``nemo_automodel/components/moe/parallelizer.py``
  ``apply_ac``: each block in ``checkpoint_wrapper`` (non-reentrant, early stop on), a
  whole-layer checkpoint: ``--no-module-ckpt``. Their own layer kernels (Automodel's MoE
  backends) are priced as the Hugging Face model's: stated. That parallelizer asserts
  ``tp_axis_name is None or world_mesh[tp_axis_name].size() == 1``: the import refuses
  ``tensor_parallel_size`` > 1 with such a class (NeMo RL v0.5.0's v2 worker asserted the
  same, ``dtensor_policy_worker_v2.py``).

Before v0.6.0 (Automodel 277a8a8d at v0.4.0, 1d42deb9 at v0.5.0) the parallelizer has no
transformers branch: every model the default strategy parallelizes is wrapped per module as
under v1; the import takes the current rule and says how to price the older one. What else
v2 changes that rlmcost prices is the same: fp32 master weights (``torch_dtype=torch.float32``,
setup.py @v0.7.0 line 330; v1 the same), FSDP2 ``MixedPrecisionPolicy`` with fp32 reduce and
output and ``CPUOffloadPolicy`` under ``cpu_offload`` (setup.py lines 480-490).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.frameworks.config import Reader
    from rlmcost.frameworks.result import ImportedQuery

AUTOMODEL_CLASSES = frozenset({"qwen3_moe", "deepseek_v3", "kimi_k2", "glm4_moe", "qwen3_next",
                               "gpt_oss", "glm4_moe_lite", "minimax_m2", "qwen3_5_moe",
                               "qwen3_vl_moe", "nemotron_h", "gemma4"})  # fmt: skip
"""The ``model_type`` of rlmcost's models whose NeMo RL v2 worker runs NeMo Automodel's own
class (module docstring: registry and adapters at Automodel 92635e74 and 24b47e85). The last
five are in the registry at 24b47e85 (NeMo RL @7ea279abf's pin; not at 92635e74):
``Glm4MoeLiteForCausalLM`` (its adapter is GLM-4-MoE's), ``MiniMaxM2ForCausalLM``,
``Qwen3_5MoeForConditionalGeneration``, ``Qwen3VLMoeForConditionalGeneration`` and
``NemotronHForCausalLM`` (components/models/nemotron_v3), each an ``MoEFSDPSyncMixin`` whose
state-dict adapter has ``convert_single_tensor_to_hf``, so ``_maybe_set_force_hf`` keeps them.
Gemma 4 (``Gemma4ForConditionalGeneration``, components/models/gemma4_moe/model.py at 24b47e85;
its package's adapter has ``convert_single_tensor_to_hf``) too, for the MoE 26B-A4B: the dense
31B's class keeps transformers' layers ("Dense Gemma4 — keep vanilla HF model"), which
Automodel's FSDP2 path checkpoints as a transformers model's (:data:`DENSE_AS_HF`)."""
DENSE_AS_HF = {"gemma4": "NeMo Automodel's Gemma 4 class keeps transformers' dense layers "
                         "(gemma4_moe/model.py @24b47e85)"}
"""Automodel classes that run a dense checkpoint as transformers' model (no experts)."""

V1_NOTE = ("policy.dtensor_cfg._v2 false (NeMo RL's code default): the DTensor v1 worker, "
           "each layer's modules checkpointed apart, non-reentrant (--module-ckpt; "
           "rlmcost.perf.module_ckpt)")  # fmt: skip
REENTRANT_NOTE = (
    "policy.dtensor_cfg._v2: the DTensor v2 worker builds {model} from its transformers class "
    "({why}), which NeMo Automodel checkpoints by gradient_checkpointing_enable("
    "use_reentrant=True): each layer rerun whole, no early stop (parallelizer.py @24b47e85, "
    "NeMo RL v0.6.0 on; v0.4.0-v0.5.0 wrap per module as v1: give --module-ckpt "
    "--recompute-early-stop)"
)
FORCED_HF = {"llama": "Llama", "qwen2": "Qwen2"}
"""Automodel classes NeMo RL turns off (``_maybe_set_force_hf``: their state-dict adapters
lack ``convert_single_tensor_to_hf``, module docstring)."""
AUTOMODEL_NOTE = (
    "policy.dtensor_cfg._v2: the DTensor v2 worker builds {model} from NeMo Automodel's own "
    "class, each block in a non-reentrant checkpoint_wrapper (moe/parallelizer.py apply_ac "
    "@24b47e85): a whole-layer checkpoint, early stop on; its layer kernels priced as the "
    "Hugging Face model's"
)


def dtensor_worker(r: Reader, q: ImportedQuery, ckpt: bool) -> tuple[bool, bool | None]:
    """Read ``policy.dtensor_cfg._v2`` (and ``automodel_kwargs.force_hf``) and, under full
    recomputation (``ckpt``), set the checkpoint the worker runs (module docstring). An
    Automodel MoE class under tensor parallelism is refused, as Automodel refuses it.
    Returns whether the worker is v2 and whether it builds Automodel's own class (None: the
    model's class unknown to rlmcost)."""
    c = "policy.dtensor_cfg"
    v2 = r.flag(f"{c}._v2", False)
    forced = r.flag(f"{c}.automodel_kwargs.force_hf", False)
    model = str(dict(q.flags)["--model"])
    mt, moe = _model_type(model)
    own = v2 and not forced and mt in AUTOMODEL_CLASSES and (moe or mt not in DENSE_AS_HF)
    kind = own if (own or forced or mt is not None) else None
    if own and r.integer(f"{c}.tensor_parallel_size", 1) > 1:
        raise SpecError(f"{r.where}: the DTensor v2 worker builds {model} from NeMo Automodel's "
                        "own MoE class, whose parallelizer refuses tensor parallelism "
                        "(components/moe/parallelizer.py parallelize_model @24b47e85); set "
                        f"{c}.automodel_kwargs.force_hf=true or tensor_parallel_size 1")
    if not ckpt:
        return v2, kind
    if not v2:  # the preset prices the v2 worker (the examples' _v2: true)
        q.set("--module-ckpt")
        q.note(V1_NOTE)
        return v2, kind
    if mt is None and not forced:  # the class, and so the checkpoint, unknown
        q.note(f"policy.dtensor_cfg._v2: the v2 worker checkpoints by {model}'s class (NeMo "
               "Automodel's or transformers'), unknown to rlmcost: give policy.model_name a "
               "config.json (rlmcost.frameworks.nemo_rl_worker)")  # fmt: skip
        return v2, kind
    q.set("--no-module-ckpt")
    if own:
        q.set("--recompute-early-stop")  # the preset's transformers classes rerun whole
        q.note(AUTOMODEL_NOTE.format(model=model))
        return v2, kind
    q.set("--no-recompute-early-stop")
    off = FORCED_HF.get(mt or "")
    why = ("automodel_kwargs.force_hf" if forced else
           f"NeMo RL's _maybe_set_force_hf turns Automodel's {off} class off" if off else
           DENSE_AS_HF.get(mt or "", "NeMo Automodel has no class of its own"))  # fmt: skip
    q.note(REENTRANT_NOTE.format(model=model, why=why))
    return v2, kind


def _model_type(model: str) -> tuple[str | None, bool]:
    """The transformers ``model_type`` of ``model`` (a built-in name, Hugging Face id or
    config.json), None where rlmcost cannot resolve it (the estimate then says so), and
    whether it has routed experts."""
    from rlmcost.specs.registry import get_model

    try:
        spec = get_model(model)
    except SpecError:
        return None, False
    return spec.model_type, spec.is_moe
