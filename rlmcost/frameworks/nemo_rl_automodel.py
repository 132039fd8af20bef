"""NeMo RL's DTensor v2 worker with expert parallelism (``policy.dtensor_cfg.expert_parallel_size``)
and HSDP (``dp_replicate_size``), as NeMo Automodel shards an MoE model.

**The meshes** (NeMo RL ``nemo_rl/models/automodel/setup.py`` @7ea279abf
``setup_distributed``, lines 461-513; NeMo Automodel @24b47e85, NeMo RL's pin,
``nemo_automodel/components/distributed/device_mesh.py`` ``_create_fsdp2_device_mesh``, lines
115-235): the data axis is ``world / (tp x cp)`` (NeMo RL passes no ``dp_size``), the device
mesh ``(pp, dp_replicate, dp_shard, cp, tp)``; with ``ep_size`` > 1 the MoE mesh flattens every
non-PP rank and splits it into ``(ep_shard, ep)``, EP innermost, so ``ep`` must divide the
world (``non_pp_size % ep_size == 0``) and ``ep_shard = world / ep``.

**Who holds what** (``nemo_automodel/components/moe/parallelizer.py`` @24b47e85):
``apply_ep`` (lines 76-100) shards dim 0 of each grouped-experts tensor (the expert dim) over
``ep``: a rank holds ``n_routed_experts / ep`` whole experts (``parallelize_model`` asserts that
``ep`` divides ``n_routed_experts``, lines 361-366); ``apply_fsdp`` (lines 172-231)
``fully_shard``s those experts over ``ep_shard`` (dim 1) and each block's other parameters
(attention, router, shared experts), the embedding and the head over ``dp_shard_cp`` (or the
2-D ``(dp_replicate, dp_shard_cp)`` under HSDP, ``mesh.py`` ``_dp_axis_names``), the experts
left out of the block's group (``ignored_params``). rlmcost's ``--zero 3 --ep`` is that layout:
dense states over the P_d P_c ranks, experts over the expert-DP group (EP innermost,
:data:`rlmcost.parallel.comm.EXPERT_ORDER`), so a layer's ZeRO-3 gather brings in its dense
weights and its local experts' shards, never the other experts.

**The tokens** (``automodel_kwargs.backend``, ``BackendConfig`` in
``nemo_automodel/components/models/common/utils.py`` @24b47e85, lines 140-234; the class by
``components/moe/layers.py`` lines 583-609): ``dispatcher: deepep`` (or the deprecated
``enable_deepep: true``, which also sets ``experts: gmm``) runs DeepEP's dispatch
(``GroupedExpertsDeepEP``): ``--ep-dispatcher deepep``; ``hybridep`` is timed as DeepEP as for
Megatron-core (:mod:`rlmcost.frameworks.moe_dispatcher`); ``torch`` all-gathers every EP rank's
tokens and all-reduces the outputs (``GroupedExperts.forward``, experts.py lines 320-395):
timed as Megatron-core's allgather dispatcher (``--ep-dispatcher allgather``, which
reduce-scatters: the all-reduce's second half and the top-k indices in place of the
``[tokens, E]`` map are not modelled); ``uccl_ep`` is refused (not modelled). Unset, the
dataclass default is ``deepep`` where DeepEP imports, which NeMo RL's ``automodel`` extra
installs (``pyproject.toml`` @7ea279abf, lines 135-136). ``experts`` (gmm, te, torch_mm,
torch) picks the expert GEMM kernel: priced as grouped GEMMs whatever it is.

**Refused as they refuse it**: EP on a class that is not Automodel's MoE (a transformers class,
or one ``force_hf`` selects): ``validate_for_mesh`` raises ("Expert parallelism ... requires a
MoE model, but ... does not inherit from MoEFSDPSyncMixin", ``_transformers/capabilities.py``
lines 345-352 @24b47e85); ``dp_replicate_size`` > 1 on the v1 worker (``lm_policy.py``
@7ea279abf lines 179-184); ``world / (tp x cp x ep)`` not a multiple of ``dp_replicate_size``
(setup.py lines 467-475); ``dp_replicate_size`` not below the data axis (device_mesh.py lines
169-172). The v1 worker builds no expert mesh (only ``automodel/setup.py`` reads
``expert_parallel_size``): the key is ignored there, as NeMo RL ignores it.

**HSDP** (``dp_replicate_size`` R > 1): the dense states sharded over ``world / (tp x R)``
ranks and replicated R times: ``--zero-shard``. Automodel shards the experts over the whole
``ep_shard`` axis (not replicated); rlmcost's hybrid layout also replicates them R times
(``Layout.expert_zero_group``): stated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.choices import EpDispatcher
from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.frameworks.config import Reader
    from rlmcost.frameworks.result import ImportedQuery

C = "policy.dtensor_cfg"
BACKEND = f"{C}.automodel_kwargs.backend"
DISPATCHERS = ("deepep", "hybridep", "torch", "uccl_ep")
EXPERTS = ("gmm", "te", "torch_mm", "torch")
DEFAULT_DISPATCHER = "deepep"
"""``BackendConfig.dispatcher``'s default where DeepEP imports (utils.py lines 173-179
@24b47e85), which NeMo RL's automodel extra installs (pyproject.toml lines 135-136
@7ea279abf)."""

EP_NOTE = ("{c}.expert_parallel_size {ep}: NeMo Automodel's expert parallelism, {local} of "
           "{experts} experts whole on each rank (apply_ep, moe/parallelizer.py @24b47e85), "
           "{shard}; the dense weights FSDP2-sharded over the data ranks (apply_fsdp): "
           "--zero 3 --ep {ep}")
V1_NOTE = (f"{C}.expert_parallel_size {{ep}}: ignored by the DTensor v1 worker (no expert "
           "mesh: only nemo_rl/models/automodel/setup.py reads it), as NeMo RL ignores it")
DISPATCH_NOTES = {
    "deepep": "automodel_kwargs.backend dispatcher deepep: DeepEP dispatch "
              "(GroupedExpertsDeepEP, moe/layers.py @24b47e85): --ep-dispatcher deepep",
    "hybridep": "automodel_kwargs.backend dispatcher hybridep: timed as DeepEP's normal "
                "kernels (--ep-dispatcher deepep), as for Megatron-core's HybridEP",
    "torch": "automodel_kwargs.backend dispatcher torch: every EP rank's tokens all-gathered, "
             "the outputs all-reduced (GroupedExperts.forward, moe/experts.py @24b47e85): timed "
             "as Megatron-core's allgather dispatcher (--ep-dispatcher allgather; its "
             "reduce-scatter is half the all-reduce: not modelled)",
}
UNSET_NOTE = ("automodel_kwargs.backend.dispatcher unset: BackendConfig's deepep (DeepEP is in "
              "NeMo RL's automodel extra, pyproject.toml @7ea279abf): --ep-dispatcher deepep")
HSDP_NOTE = (f"{C}.dp_replicate_size {{r}}: HSDP, the dense states sharded over {{z}} ranks "
             "and replicated {r} times (device_mesh.py @24b47e85): --zero-shard {z}")
HSDP_EP_NOTE = ("HSDP with EP: Automodel shards the experts over the whole ep_shard axis; "
                "rlmcost replicates their shards {r} times as the dense ones (not modelled)")


def automodel_parallel(r: Reader, q: ImportedQuery, own: bool | None, v2: bool, tp: int,
                       cp: int) -> int:  # fmt: skip
    """Read ``expert_parallel_size``, ``dp_replicate_size`` and the backend's dispatcher for
    the worker (``v2``) and the model's class (``own``: Automodel's MoE class; False a
    transformers class; None unknown), set ``--zero-shard`` and ``--ep-dispatcher``, and return
    the trainer's EP (module docstring)."""
    ep = r.integer(f"{C}.expert_parallel_size", 1)
    rep = r.integer(f"{C}.dp_replicate_size", 1)
    r.raw(f"{C}.moe_parallelizer", None)  # reshard_after_forward etc.: read, not modelled
    gpus = int(dict(q.flags)["--gpus"])
    if not v2:
        if rep > 1:
            raise SpecError(f"{r.where}: {C}.dp_replicate_size {rep} needs the DTensor v2 "
                            "worker (lm_policy.py: 'HSDP is not supported with the V1 DTensor "
                            f"worker'); set {C}._v2 true")  # fmt: skip
        if ep > 1:
            q.note(V1_NOTE.format(ep=ep))
        return 1
    if rep > 1:
        _hsdp(r, q, rep, gpus, tp, cp, ep)
    if ep == 1:
        return 1
    model = str(dict(q.flags)["--model"])
    if own is False:
        raise SpecError(f"{r.where}: {C}.expert_parallel_size {ep}: the DTensor v2 worker "
                        f"builds {model} from a transformers class, which NeMo Automodel "
                        "refuses expert parallelism ('requires a MoE model ... "
                        "MoEFSDPSyncMixin', _transformers/capabilities.py @24b47e85); set "
                        "it to 1 (or drop automodel_kwargs.force_hf)")  # fmt: skip
    if gpus % ep:
        raise SpecError(f"{r.where}: {C}.expert_parallel_size {ep} does not divide the "
                        f"{gpus} GPUs (NeMo Automodel's device_mesh.py asserts non_pp_size % "
                        "ep_size == 0)")  # fmt: skip
    experts = _experts(model)
    if experts is not None and experts % ep:
        raise SpecError(f"{r.where}: {C}.expert_parallel_size {ep} does not divide {model}'s "
                        f"{experts} routed experts (moe/parallelizer.py @24b47e85 asserts "
                        "n_routed_experts % ep == 0)")  # fmt: skip
    if experts is not None:
        shard = (f"FSDP2-sharded over the {gpus // ep} ep_shard ranks" if gpus > ep else
                 "not sharded further (ep_shard 1)")  # fmt: skip
        q.note(EP_NOTE.format(c=C, ep=ep, local=experts // ep, experts=experts, shard=shard))
    _dispatcher(r, q)
    return ep


def _hsdp(r: Reader, q: ImportedQuery, rep: int, gpus: int, tp: int, cp: int,
          ep: int) -> None:  # fmt: skip
    """``dp_replicate_size``: NeMo RL's and Automodel's checks, then ``--zero-shard``."""
    if (gpus // (tp * cp * ep)) % rep:
        raise SpecError(f"{r.where}: the data-parallel size {gpus // (tp * cp * ep)} (GPUs / "
                        f"(tp x cp x ep)) is not a multiple of {C}.dp_replicate_size {rep} "
                        "(nemo_rl/models/automodel/setup.py setup_distributed)")  # fmt: skip
    dp = gpus // (tp * cp)
    if dp % rep or rep >= dp:
        raise SpecError(f"{r.where}: {C}.dp_replicate_size {rep} must divide and be below the "
                        f"data axis {dp} (NeMo Automodel's device_mesh.py: FSDP2 has no pure "
                        "replication)")  # fmt: skip
    z = gpus // (tp * rep)  # dp_shard x cp
    q.set("--zero-shard", z)
    q.note(HSDP_NOTE.format(r=rep, z=z))
    if ep > 1:
        q.note(HSDP_EP_NOTE.format(r=rep))


def _dispatcher(r: Reader, q: ImportedQuery) -> None:
    """``automodel_kwargs.backend`` ``dispatcher`` / ``enable_deepep`` / ``experts`` as
    ``BackendConfig.__post_init__`` resolves them (module docstring)."""
    how = r.text(f"{BACKEND}.dispatcher", None, DISPATCHERS)
    r.text(f"{BACKEND}.experts", None, EXPERTS)  # the expert GEMM: priced as grouped GEMMs
    legacy = r.raw(f"{BACKEND}.enable_deepep", None)
    if legacy is not None:  # deprecated; overrides dispatcher (utils.py lines 199-214)
        how = "deepep" if r.flag(f"{BACKEND}.enable_deepep", False) else "torch"
    if how == "uccl_ep":
        raise SpecError(f"{r.where}: {BACKEND}.dispatcher uccl_ep (UCCL-EP) is not modelled; "
                        "give deepep or torch")  # fmt: skip
    if how is None:
        q.note(UNSET_NOTE)
        how = DEFAULT_DISPATCHER
    else:
        q.note(DISPATCH_NOTES[how])
    disp = EpDispatcher.ALLGATHER if how == "torch" else EpDispatcher.DEEPEP
    q.set("--ep-dispatcher", str(disp))


def _experts(model: str) -> int | None:
    """The routed experts of ``model``, None where rlmcost cannot resolve it (or it has none:
    Automodel's class then has no MoE to shard, and the estimate says what it lacks)."""
    from rlmcost.specs.registry import get_model

    try:
        n = get_model(model).arch().n_experts
    except SpecError:
        return None
    return int(n) if n else None
