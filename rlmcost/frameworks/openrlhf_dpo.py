"""OpenRLHF DPO import: the arguments of ``openrlhf.cli.train_dpo`` (argparse, defaults from
``openrlhf/cli/train_dpo.py`` @3c3be623, its dotted names) and the launcher before it as an
``rlmcost dpo`` query.

Units (train_dpo.py, ``openrlhf/trainer/dpo_trainer.py`` and ``openrlhf/datasets/
reward_dataset.py`` @3c3be623):

* ``--train.batch_size`` counts preference pairs per optimizer step (DeepSpeed's
  ``train_batch_size``): ``--batch``;
* ``--train.micro_batch_size`` counts pairs per GPU; ``DPOTrainer.concatenated_forward`` runs
  the chosen and the rejected responses of a micro-batch in one forward, the actor's and the
  reference's: ``--micro-batch`` is twice it, in sequences;
* ``--data.max_len`` bounds each response with its prompt (``RewardDataset`` truncates
  prompt + chosen and prompt + rejected to it): ``--prompt-len`` + ``--response-len``.

The GPUs are the launcher's (:func:`launcher_gpus`): DeepSpeed's ``--num_gpus`` x
``--num_nodes`` or ``--include``, torchrun's ``--nproc_per_node`` x ``--nnodes``; a launcher
that names none runs on every GPU of its machine, which the script does not say (``rlmcost
import openrlhf SCRIPT --gpus N``).
"""

from __future__ import annotations

import re
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.argv import SWITCH, parse_argv
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.openrlhf import DEEPSPEED_ADAM_OFFLOAD
from rlmcost.frameworks.result import ImportedQuery

ARGS: dict[str, Any] = {
    "model.model_name_or_path": str, "ref.model_name_or_path": str, "ref.offload": SWITCH,
    "data.max_len": int, "train.micro_batch_size": int, "train.batch_size": int,
    "ds.zero_stage": int, "ds.param_dtype": str, "model.gradient_checkpointing_enable": SWITCH,
    "model.gradient_checkpointing_reentrant": SWITCH, "ds.adam_offload": SWITCH,
    "ds.attn_implementation": str, "ds.packing_samples": SWITCH, "ds.ring_attn_size": int,
    "ds.tensor_parallel_size": int, "ds.lora.rank": int, "ds.lora.target_modules": ("list", None),
    "ds.load_in_4bit": SWITCH, "ds.use_liger_kernel": SWITCH, "ds.deepcompile": SWITCH,
    "optim": str, "model.ipo_enable": SWITCH, "model.label_smoothing": float,
    "ds.experts_implementation": str, "torch_compile": SWITCH, "disable_trace_cache": SWITCH,
}  # fmt: skip
"""The train_dpo.py arguments the importer reads, with their argparse types
(``--ds.experts_implementation`` from ed62d0e2; the flat ``--torch_compile``, 56ec94af to
fad661fa, and ``--disable_trace_cache``, to feec1b9b, have no dotted name)."""

COST_FREE = (
    "ckpt", "logger", "eval", "ds.use_universal_ckpt", "train.seed",
    "train.full_determinism_enable", "train.max_epochs", "data.dataset", "data.dataset_probs",
    "data.dataset_split", "data.max_samples", "data.prompt_key", "data.chosen_key",
    "data.rejected_key", "data.input_template", "data.apply_chat_template",
    "data.tokenizer_chat_template", "data.disable_fast_tokenizer", "data.dataloader_num_workers",
    "local_rank", "model.beta", "model.aux_loss_coef",
    "model.nll_loss_coef", "muon", "adam", "lr_scheduler", "lr_warmup_ratio", "min_lr_ratio",
    "max_norm", "ds.ring_attn_head_stride", "ds.lora.alpha", "ds.lora.dropout", "ds.zpg",
    "ds.grad_accum_dtype", "ds.overlap_comm", "use_ms",
)  # fmt: skip
"""train_dpo.py's arguments (and prefixes) that change no cost: paths, logging, data
selection, the loss's coefficients (beta, label smoothing, the NLL term over log-probs the
forward computes anyway), the optimizer's constants; ``ds.zpg``, ``ds.grad_accum_dtype`` and
``ds.overlap_comm`` as the train_ppo_ray importer takes them (:data:`~rlmcost.frameworks.
openrlhf.IGNORED`). Read nowhere, listed nowhere."""

FLAT: dict[str, str] = {
    "pretrain": "model.model_name_or_path", "ref_pretrain": "ref.model_name_or_path",
    "ref_offload": "ref.offload", "max_len": "data.max_len", "train_batch_size":
    "train.batch_size", "micro_train_batch_size": "train.micro_batch_size", "zero_stage":
    "ds.zero_stage", "param_dtype": "ds.param_dtype", "gradient_checkpointing":
    "model.gradient_checkpointing_enable", "gradient_checkpointing_use_reentrant":
    "model.gradient_checkpointing_reentrant", "adam_offload": "ds.adam_offload",
    "attn_implementation": "ds.attn_implementation", "packing_samples": "ds.packing_samples",
    "ring_attn_size": "ds.ring_attn_size", "ds_tensor_parallel_size": "ds.tensor_parallel_size",
    "lora_rank": "ds.lora.rank", "target_modules": "ds.lora.target_modules", "load_in_4bit":
    "ds.load_in_4bit", "use_liger_kernel": "ds.use_liger_kernel", "deepcompile": "ds.deepcompile",
    "ipo": "model.ipo_enable", "label_smoothing": "model.label_smoothing",
    "use_linger_kernel": "ds.use_liger_kernel",
}  # fmt: skip
"""train_dpo.py's flat arguments before OpenRLHF's dotted ones (ed62d0e2, 2026-04-19;
openrlhf/cli/train_dpo.py @c1ba971c, and @45de3db2 with ``--bf16`` and ``--flash_attn``) that
change cost, and the dotted name each became: read as it (``--use_linger_kernel``, the name
of 71f139b8, fixed the same day in 244d96b6, as ``--use_liger_kernel``)."""

FLAT_COST_FREE = (
    "save_path", "save_steps", "save_hf_ckpt", "disable_ds_ckpt", "logging_steps", "eval_steps",
    "ckpt_path", "max_ckpt_num", "max_ckpt_mem", "use_ds_universal_ckpt", "load_checkpoint",
    "max_norm", "seed", "full_determinism", "disable_fast_tokenizer", "dataloader_num_workers",
    "learning_rate", "lr_warmup_ratio", "lr_scheduler", "min_lr_ratio", "zpg",
    "grad_accum_dtype", "overlap_comm", "max_epochs", "l2", "beta",
    "aux_loss_coef", "nll_loss_coef", "adam_betas", "ring_head_stride", "lora_alpha",
    "lora_dropout", "dataset", "dataset_probs", "eval_dataset", "dataset_split", "eval_split",
    "max_samples", "prompt_key", "chosen_key", "rejected_key", "input_template",
    "apply_chat_template", "tokenizer_chat_template", "use_wandb", "wandb_org", "wandb_group",
    "wandb_project", "wandb_run_name", "use_tensorboard", "bf16", "flash_attn", "train_split",
    "universal_ckpt",
)  # fmt: skip
"""The flat arguments that change no cost, as :data:`COST_FREE` (``--bf16``: bf16, the
dotted layout's default; ``--flash_attn``: FlashAttention, what rlmcost prices)."""

_LAUNCHERS = ("deepspeed", "torchrun")
ENTRY = "openrlhf.cli.train_dpo"


def reads(name: str) -> bool:
    """Whether the importer reads train_dpo.py's argument ``name`` (dotted or flat): a value
    it does not read may stay unknown."""
    return FLAT.get(name, name) in ARGS


def import_openrlhf_dpo(argv: list[str], gpus: int, how: str) -> ImportedQuery:
    """The ``rlmcost dpo`` query of train_dpo.py's arguments ``argv`` (dotted, or the flat
    ones before them: :data:`FLAT`) on ``gpus`` GPUs (``how``: where that count comes from)."""
    names = {t[2:].partition("=")[0] for t in argv if t.startswith("--")}
    tokens = [f"--{FLAT[n]}{t[2 + len(n):]}" if t.startswith("--") and
              (n := t[2:].partition("=")[0]) in FLAT else t for t in argv]  # fmt: skip
    r = Reader(parse_argv(tokens, ARGS, "OpenRLHF train_dpo arguments"),
               "OpenRLHF train_dpo arguments")  # fmt: skip
    q = ImportedQuery("openrlhf", "train_dpo arguments", algorithm="dpo")
    if flat := sorted(names & set(FLAT)):
        q.note(f"train_dpo.py's flat arguments (before OpenRLHF v0.10.2) read as their dotted "
               f"names: {', '.join(f'--{n} as --{FLAT[n]}' for n in flat)}")
    model = r.text("model.model_name_or_path", None)
    if not model:
        raise SpecError(f"{r.where}: give --model.model_name_or_path MODEL (the policy)")
    q.set("--model", model)
    ref = r.text("ref.model_name_or_path", None)
    if ref and ref != model:  # train_dpo.py: an empty one is the policy's
        q.set("--ref", ref)
    _loss(r, q)
    _workload(r, q)
    _layout(r, q)
    q.convert(how, "--gpus", gpus, "GPUs of the DeepSpeed job (each runs the actor and the "
              "reference, ZeRO over all of them)")  # fmt: skip
    q.ignored = [f"--{k}" for k in r.unread(COST_FREE + FLAT_COST_FREE)]
    q.near = {f"--{k}": f"--{v}" for k, v in r.near_misses(COST_FREE + FLAT_COST_FREE).items()}
    return q


def _loss(r: Reader, q: ImportedQuery) -> None:
    """The preference loss (openrlhf/models/loss.py ``DPOLoss`` @3c3be623, built in
    openrlhf/trainer/dpo_trainer.py from ``--model.ipo_enable`` and ``--model.label_smoothing``):
    with ``ipo`` the squared IPO loss ``(logits - 1/(2 beta))^2`` (label smoothing unused), else
    DPO's ``-logsigmoid(beta logits)``, mixed with ``-logsigmoid(-beta logits)`` by the label
    smoothing (cDPO, conservative DPO, e > 0). Each runs the same passes over the same pairs
    (policy and reference forwards of chosen and rejected, one policy backward): ``rlmcost
    ipo`` for IPO (DPO's invocations), ``rlmcost dpo`` for cDPO, the loss's elementwise terms
    beside the passes not priced."""
    smoothing = r.number("model.label_smoothing", 0.0)  # any value runs (no check in OpenRLHF)
    if r.flag("model.ipo_enable", False):
        q.algorithm = "ipo"
        q.note("--model.ipo_enable: IPO's squared loss (DPOLoss ipo=True) over DPO's passes: "
               "rlmcost ipo")  # fmt: skip
        if smoothing:
            q.note(f"--model.label_smoothing {smoothing:g} with --model.ipo_enable: OpenRLHF's "
                   "IPO loss does not use it (DPOLoss)")  # fmt: skip
    elif smoothing:
        q.note(f"--model.label_smoothing {smoothing:g}: cDPO (conservative DPO, DPOLoss), the "
               "same passes as DPO: rlmcost's dpo")  # fmt: skip


def _workload(r: Reader, q: ImportedQuery) -> None:
    pairs = r.integer("train.batch_size", 128)
    q.convert(f"--train.batch_size {pairs}", "--batch", pairs,
              "preference pairs per optimizer step (DeepSpeed's train_batch_size)")  # fmt: skip
    total = r.integer("data.max_len", 512, lo=2)
    t = total // 2
    q.convert(f"--data.max_len {total}", "--prompt-len", total - t,
              f"tokens: prompt + response {total} less the response's {t}")  # fmt: skip
    q.convert(f"--data.max_len {total}", "--response-len", t, "tokens (the maximum)")
    q.note(f"--data.max_len {total} bounds prompt + response: rlmcost takes a {total - t}-token "
           f"prompt and a {t}-token response (DPO's cost depends on their sum only)")
    micro = r.integer("train.micro_batch_size", 8)
    q.convert(f"--train.micro_batch_size {micro}", "--micro-batch", 2 * micro,
              f"pairs per GPU: chosen and rejected in one forward, {2 * micro} sequences "
              "(DPOTrainer.concatenated_forward)")  # fmt: skip
    if r.flag("ds.packing_samples", False):
        q.set("--packing")


def _layout(r: Reader, q: ImportedQuery) -> None:
    zero = r.integer("ds.zero_stage", 2, lo=0, hi=3)
    q.set("--zero", str(zero))
    if zero == 3:  # HfDeepSpeedConfig: from_pretrained under deepspeed.zero.Init
        q.set("--init-load", "sharded")
    if (dtype := r.text("ds.param_dtype", "bf16", ("bf16", "fp16"))) != "bf16":
        q.set("--param-dtype", dtype)
    if (tp := r.integer("ds.tensor_parallel_size", 1)) > 1:
        q.set("--tp", tp)
    if (cp := r.integer("ds.ring_attn_size", 1)) > 1:
        q.convert(f"--ds.ring_attn_size {cp}", "--cp", cp, "ring attention: context parallelism")
    ckpt = r.flag("model.gradient_checkpointing_enable", False)
    q.set("--ckpt", "full" if ckpt else "none")
    if r.flag("model.gradient_checkpointing_reentrant", False) and ckpt:
        q.convert("--model.gradient_checkpointing_reentrant", "--no-recompute-early-stop", None,
                  "torch's reentrant checkpoint: the whole layer rerun, no early stop",
                  default=False)
    if r.flag("ds.adam_offload", False):
        q.set("--offload", DEEPSPEED_ADAM_OFFLOAD)
    if (rank := r.integer("ds.lora.rank", 0, lo=0, hi=65536)) > 0:
        q.set("--lora-rank", rank)
        q.set("--lora-targets", ",".join(r.words("ds.lora.target_modules", "all-linear")))
        q.note("--ds.lora.rank: train_dpo.py loads the reference as a model of its own (ref_model "
               "= Actor(...), no adapters), while rlmcost's --lora-rank runs it on the actor's "
               "base weights: the memory is low by the reference's weights (its ZeRO shard)")
    if r.flag("ds.load_in_4bit", False):
        raise SpecError(f"{r.where}: --ds.load_in_4bit (QLoRA's 4-bit base weights) is not "
                        "priced by rlmcost; drop it for the bf16 estimate")  # fmt: skip
    if r.flag("ref.offload", False):
        _ref_offload(q, zero)
    q.set("--logits", "fused" if r.flag("ds.use_liger_kernel", False) else "low-memory")
    attn = r.text("ds.attn_implementation", "flash_attention_2")
    if "flash" not in attn:
        q.note(f"--ds.attn_implementation {attn}: rlmcost prices fused (FlashAttention) "
               "attention, no score matrix held")  # fmt: skip
    if r.flag("ds.deepcompile", False) or r.flag("torch_compile", False):
        q.note("--ds.deepcompile / --torch_compile: DeepSpeed's compiled passes are not "
               "modelled; priced as eager DeepSpeed")  # fmt: skip
    if r.flag("disable_trace_cache", False):  # openrlhf/utils/deepspeed_utils.py @3b116caf
        q.note("--disable_trace_cache: ZeRO-3 without parameter prefetch (prefetch bucket and "
               "live parameters 0) is not modelled; priced with DeepSpeed's prefetch")
    if (impl := r.text("ds.experts_implementation", None)) is not None:
        q.note(f"--ds.experts_implementation {impl}: transformers' MoE expert kernels are not "
               "told apart; rlmcost prices grouped expert GEMMs")  # fmt: skip
    if r.text("optim", "adam", ("adam", "muon")) == "muon":
        q.note("--optim muon: priced as Adam (Muon keeps one momentum buffer, not Adam's two; "
               "an over-estimate of the optimizer's memory)")  # fmt: skip


def _ref_offload(q: ImportedQuery, zero: int) -> None:
    """``--ref.offload``: the reference's DeepSpeed eval config with ``offload_param`` on the
    CPU (openrlhf/utils/deepspeed/deepspeed.py ``get_ds_eval_config``, deepspeed_utils.py
    ``get_eval_ds_config`` @3c3be623), at ZeRO-3 when training is, else stage 0, where DeepSpeed
    offloads no parameters (``offload_param`` is ZeRO-3's)."""
    if zero != 3:
        q.note(f"--ref.offload: no effect at --ds.zero_stage {zero} (the reference runs at ZeRO "
               "stage 0, and DeepSpeed offloads parameters only under ZeRO-3)")  # fmt: skip
        return
    q.set("--offload-idle")
    q.note("--ref.offload: the reference's parameters in host memory (ZeRO-3 offload_param), "
           "streamed in for each of its forwards; rlmcost moves them once per iteration "
           "(--offload-idle), less host traffic than DeepSpeed's per micro-batch")  # fmt: skip


def import_openrlhf_argv(argv: list[str], gpus: int | None) -> ImportedQuery:
    """The query of a typed OpenRLHF command line: train_ppo_ray's arguments
    (:func:`~rlmcost.frameworks.openrlhf.import_openrlhf`), or a train_dpo launch (``deepspeed
    --num_gpus 8 --module openrlhf.cli.train_dpo ...``), its GPUs from the launcher's words or
    ``gpus``."""
    from rlmcost.frameworks.openrlhf import import_openrlhf

    if ENTRY not in argv:
        if gpus is not None:
            raise SpecError("--gpus is for a train_dpo launch; train_ppo_ray's arguments give "
                            "each model's GPUs (--actor_num_gpus_per_node ...)")  # fmt: skip
        return import_openrlhf(argv)
    at = argv.index(ENTRY)
    count, how = dpo_gpus(argv[:at], gpus, "OpenRLHF train_dpo command")
    return import_openrlhf_dpo(argv[at + 1:], count, how)


def dpo_gpus(launcher: list[str], gpus: int | None, where: str) -> tuple[int, str]:
    """The GPUs of a train_dpo launch and the words that say so: the ``launcher``'s
    (:func:`launcher_gpus`), else ``gpus`` (``--gpus``); SpecError, naming the variables that
    would give them, where neither does or they differ."""
    found, said = launcher_gpus(launcher)
    if found is not None and gpus is not None and found != gpus:
        raise SpecError(f"{where}: {said} runs on {found} GPUs, not --gpus {gpus}; drop --gpus")
    if found is not None:
        return found, said
    if gpus is None:
        give = "".join(f" or --env {v}=N" for v in dict.fromkeys(re.findall(r"\$\{?(\w+)", said)))
        raise SpecError(f"{where}: {said or 'no launcher'} does not say how many GPUs run "
                        f"{ENTRY} (a launcher without a count runs on every GPU of its "
                        f"machine); give --gpus N{give}")  # fmt: skip
    return gpus, f"--gpus {gpus}"


def launcher_gpus(words: list[str]) -> tuple[int | None, str]:
    """The GPUs a launcher's ``words`` (those before the entry point) run the job on, and the
    words that say so; None where they do not say (DeepSpeed without ``--num_gpus`` or
    ``--include``: every GPU of the machine; a value the script does not give). DeepSpeed's
    runner (deepspeed/launcher/runner.py): ``--num_gpus`` per node, ``--num_nodes`` (one
    without a hostfile), ``--include host:0,1@host2:0,1``; torchrun: ``--nproc_per_node`` x
    ``--nnodes``."""
    opts: dict[str, str] = {}
    for k, w in enumerate(words):
        name, eq, inline = w.partition("=")
        if name.startswith("-"):
            opts[name.lstrip("-").replace("-", "_")] = inline if eq else \
                (words[k + 1] if k + 1 < len(words) else "")  # fmt: skip
    tool = next((w for w in words if w.rsplit("/", 1)[-1] in _LAUNCHERS), None)
    if tool is None:
        return None, ""
    if tool.endswith("torchrun"):
        per, many = opts.get("nproc_per_node"), opts.get("nnodes", "1")
        said = f"torchrun --nproc_per_node {per} --nnodes {many}"
        return (int(per) * int(many) if per and per.isdigit() and many.isdigit() else None), said
    if (include := opts.get("include", opts.get("i"))) is not None:
        hosts = [h.partition(":") for h in include.split("@")]
        ok = all(slots and re.fullmatch(r"\d+(,\d+)*", slots) for _, _, slots in hosts)
        return (sum(len(s.split(",")) for _, _, s in hosts) if ok else None), \
            f"deepspeed --include {include}"  # fmt: skip
    per = opts.get("num_gpus", opts.get("num_accelerators"))
    nodes = opts.get("num_nodes", "1" if not {"hostfile", "H"} & set(opts) else None)
    said = f"deepspeed --num_gpus {per}" + (f" --num_nodes {nodes}" if "num_nodes" in opts else "")
    if per is None or nodes is None or not (per.isdigit() and nodes.isdigit()):
        return None, said if per is not None else "deepspeed (no --num_gpus nor --include)"
    return int(per) * int(nodes), said
