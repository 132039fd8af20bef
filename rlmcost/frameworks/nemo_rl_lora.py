"""NeMo RL's LoRA settings, read by :mod:`rlmcost.frameworks.nemo_rl`: the DTensor workers'
``policy.dtensor_cfg.lora_cfg`` (NeMo Automodel's ``ModuleMatcher``,
nemo_automodel/components/_peft/module_matcher.py: ``match_all_linear`` every linear layer,
else ``target_modules`` patterns, else every linear layer but ``exclude_modules``' patterns,
with ``*_proj`` when none is given) and the Megatron workers' ``policy.megatron_cfg.peft``
(Megatron-Bridge's ``LoRA``, src/megatron/bridge/peft/module_matcher.py: ``target_modules``,
else every linear layer but ``exclude_modules``); nemo_rl/models/automodel/setup.py and
nemo_rl/models/megatron/setup.py @7ea279abf. Both default off (grpo_math_1B.yaml,
grpo_math_1B_megatron.yaml); recipes/llm/grpo-qwen3-8B-base-1n8g-fsdp2-lora.yaml turns it on.
Each pattern is matched (shell-style, on the module's own name) against the decoder layer's
projections, Hugging Face names for the DTensor workers, Megatron's for the Megatron ones,
mapped to rlmcost's ``--lora-targets`` as :data:`rlmcost.frameworks.miles_lora.TARGETS`."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError
from rlmcost.frameworks.miles_lora import TARGETS

if TYPE_CHECKING:
    from rlmcost.frameworks.config import Reader
    from rlmcost.frameworks.result import ImportedQuery

HF = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
MEGATRON = ("linear_qkv", "linear_proj", "linear_fc1", "linear_fc2")


def nemo_rl_lora(r: Reader, q: ImportedQuery, megatron: bool) -> None:
    """``--lora-rank`` and ``--lora-targets`` where the policy's LoRA is enabled."""
    c, other = "policy.dtensor_cfg.lora_cfg", "policy.megatron_cfg.peft"
    if megatron:
        c, other = other, c
    for key in [k for k in r.flat if k.startswith(f"{other}.")]:
        r.raw(key)  # the LoRA settings of the backend not in use
    if not r.flag(f"{c}.enabled", False):
        for key in [k for k in r.flat if k.startswith(f"{c}.")]:
            r.raw(key)  # settings of a LoRA that is off
        return
    rank = r.integer(f"{c}.dim", 8, lo=1, hi=65536)
    targets = r.words(f"{c}.target_modules", None) or []
    exclude = r.words(f"{c}.exclude_modules", None) or []
    names = MEGATRON if megatron else HF
    if not megatron and r.flag(f"{c}.match_all_linear", False):
        targets, exclude = ["*"], []
    elif not megatron and not targets and not exclude:
        targets = ["*_proj"]  # ModuleMatcher.__post_init__'s default
    out = matched_targets(names, targets, exclude, f"{r.where}: {c} enabled but")
    q.set("--lora-rank", rank)
    q.set("--lora-targets", "all-linear" if len(out) == 7 else ",".join(out))
    for key in ("alpha", "dropout", "dropout_position", "lora_A_init", "use_triton",
                "lora_A_init_method", "lora_B_init_method", "a2a_experimental", "lora_dtype"):
        r.raw(f"{c}.{key}")  # the adapter's scale, dropout, initialisation and kernels


def matched_targets(names: tuple[str, ...], targets: list[str], exclude: list[str],
                    where: str) -> list[str]:
    """rlmcost's ``--lora-targets`` projections of the modules of ``names`` that ``targets``
    match (shell-style, on the module's own name: a pattern's last dotted part), or where no
    target is given every one that ``exclude`` does not; SpecError (``where``: its start)
    where none does."""
    last = [p.rsplit(".", 1)[-1] for p in targets]
    hit = [n for n in names if any(fnmatchcase(n, p) for p in last)] if targets else [
        n for n in names if not any(fnmatchcase(n, p.rsplit(".", 1)[-1]) for p in exclude)]
    if not hit:
        raise SpecError(f"{where} its modules match none of the decoder layer's projections "
                        f"({', '.join(names)}), the ones rlmcost prices")  # fmt: skip
    out: list[str] = []
    for n in hit:
        out += [t for t in TARGETS[n] if t not in out]
    return out
