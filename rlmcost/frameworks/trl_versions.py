"""TRL releases whose GRPOTrainer prices differently: ``rlmcost import trl --trl-version``.

Users run pinned TRL (open-r1 pinned TRL commits; requirements pin releases), and GRPOConfig's
keys changed meaning or default between releases. Each change below is one :class:`Rule`: its
pull request, the merge commit's day (UTC) on main and the first release whose tag contains the
commit (``git tag --contains`` in huggingface/trl; release days are the tags' commit days; no
earlier release line took a backport: the keys' defaults read at every tag v0.14.0 to v1.9.0
agree). A version X.Y[.Z] is before a rule when it is older than that first release; a date
YYYY-MM-DD (the day of the TRL code, e.g. a pinned commit's) when it is before the merge day.

=====================  ========  ==========  ==================  =================================
rule                   PR        merged      first release       before it -> from it
=====================  ========  ==========  ==================  =================================
PROMPTS_PER_DEVICE     2776      2025-02-06  0.15.0 (02-13)      per_device_train_batch_size
                       cf97133d                                  counts prompts (GRPOConfig default
                                                                 1), each generated num_generations
                                                                 times -> counts completions
                                                                 (transformers' default 8)
VLLM_SERVER            3094      2025-03-21  0.16.0 (03-22)      vLLM inside the main process on
                       f713f614                                  vllm_device (default auto: GPU
                                                                 num_processes) at
                                                                 vllm_gpu_memory_utilization (0.9)
                                                                 -> `trl vllm-serve` on GPUs of
                                                                 its own (both keys ignored)
GENERATE_PER_BATCH     3283      2025-04-17  0.17.0 (04-24)      one generate per micro-step -> one
                       294f35bf                                  per gradient-accumulation batch
BETA_ZERO              3516      2025-05-30  0.19.0 (06-20)      beta 0.04 (a reference model)
                       7359ddcc                                  -> 0.0
CHECKPOINTING          3510      2025-08-09  0.22.0 (08-29)      gradient_checkpointing False
                       a222aeb4                                  (transformers) -> True
VLLM_IS_CORRECTION     3867      2025-09-03  0.23.0 (09-09)      old log-probs only when
                       12fc85fd                                  gradient_accumulation_steps %
                                                                 (steps_per_generation x
                                                                 num_iterations) != 0 -> also with
                                                                 vLLM, for importance sampling
                                                                 (vllm_importance_sampling_
                                                                 correction, default True)
NON_REENTRANT          4811      2026-01-14  0.27.0 (01-15)      gradient_checkpointing_kwargs
                       40d8759d                                  None (transformers < 5 passes
                                                                 use_reentrant=True) ->
                                                                 use_reentrant False unless
                                                                 given: torch's early stop
                                                                 (perf.ckpt_early_stop)
PEFT_ZERO3_REENTRANT   4951      2026-02-06  0.28.0              PEFT + ZeRO-3 + checkpointing
                       f11b4c3f                                  forced to use_reentrant=True
COLOCATE_DEFAULT       5255      2026-03-14  1.0.0 (2026-03-30)  vllm_mode server -> colocate
=====================  ========  ==========  ==================  =================================

Keys that first exist in a later release (:data:`KEYS_ADDED`) are dropped for an older one, as
TRL's parser drops config keys it does not know (:meth:`TrlVersion.absent_keys`), each with a
note: num_iterations (PR 2899, e5ae703d, 0.16.0), steps_per_generation and generation_batch_size
(PR 3388, cf5183db, 0.18.0), vllm_mode and vllm_tensor_parallel_size (PR 3394, 18596cf2, 0.18.0,
which brought colocate and vllm_gpu_memory_utilization's default 0.3),
vllm_importance_sampling_correction (PR 3867) and vllm_enable_sleep_mode (PR 3968, edbe8234,
0.23.0), disable_dropout (PR 3234, 47b9515f, 0.17.0: rlmcost's ``--disable-dropout``,
:mod:`rlmcost.placement.model_dropout`); vllm_device (removed by PR 3394) for a later one.
Changes that move no priced work are left out: ``loss_type`` ('bnpo' from 0.17.0, 'dapo' from
0.22.0), ``epsilon``, ``scale_rewards``, ``mask_truncated_completions`` reweight or mask the
same tokens; ``max_prompt_length`` (default None from 0.26.0, gone in 0.28.0) changes which
tokens a prompt keeps, stated in the import's notes.
"""

from __future__ import annotations

import datetime
import re

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

GRPO_FIRST_RELEASE = (0, 14, 0)
"""GRPOTrainer's first release (PR 2565, 0f5ffad2, merged 2025-01-20)."""

GRPO_MERGED = "2025-01-20"


@dataclass(frozen=True)
class Rule:
    """One change of GRPOTrainer semantics: its PR, merge day (UTC) and first release."""

    pr: int
    merged: str
    release: tuple[int, int, int]

    @property
    def release_text(self) -> str:
        return ".".join(map(str, self.release))


PROMPTS_PER_DEVICE = Rule(2776, "2025-02-06", (0, 15, 0))
VLLM_SERVER = Rule(3094, "2025-03-21", (0, 16, 0))
GENERATE_PER_BATCH = Rule(3283, "2025-04-17", (0, 17, 0))
BETA_ZERO = Rule(3516, "2025-05-30", (0, 19, 0))
CHECKPOINTING = Rule(3510, "2025-08-09", (0, 22, 0))
VLLM_IS_CORRECTION = Rule(3867, "2025-09-03", (0, 23, 0))
NON_REENTRANT = Rule(4811, "2026-01-14", (0, 27, 0))
PEFT_ZERO3_REENTRANT = Rule(4951, "2026-02-06", (0, 28, 0))
COLOCATE_DEFAULT = Rule(5255, "2026-03-14", (1, 0, 0))

MULTI_STEP = Rule(2899, "2025-02-20", (0, 16, 0))
DECOUPLED_GENERATION = Rule(3388, "2025-05-06", (0, 18, 0))
VLLM_MODE = Rule(3394, "2025-05-01", (0, 18, 0))
VLLM_SLEEP = Rule(3968, "2025-09-01", (0, 23, 0))
DISABLE_DROPOUT = Rule(3234, "2025-04-09", (0, 17, 0))

KEYS_ADDED = {
    "num_iterations": MULTI_STEP,
    "steps_per_generation": DECOUPLED_GENERATION,
    "generation_batch_size": DECOUPLED_GENERATION,
    "vllm_mode": VLLM_MODE,
    "vllm_tensor_parallel_size": VLLM_MODE,
    "vllm_importance_sampling_correction": VLLM_IS_CORRECTION,
    "vllm_enable_sleep_mode": VLLM_SLEEP,
    "disable_dropout": DISABLE_DROPOUT,
}
"""GRPOConfig keys and the rule that added them (module docstring)."""

KEYS_REMOVED = {"vllm_device": VLLM_MODE}
"""GRPOConfig keys and the rule that removed them (deprecated by PR 3094, gone in 0.18.0)."""

ACCEPTED = ("a TRL release X.Y or X.Y.Z (e.g. 0.14.0, 0.16.1, v0.18.0), a date YYYY-MM-DD or "
            "'current'")

_RELEASE = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class TrlVersion:
    """The TRL a run uses: a release, the day of its code, or None for the current one."""

    release: tuple[int, int, int] | None = None
    date: str | None = None

    @property
    def current(self) -> bool:
        return self.release is None and self.date is None

    def before(self, rule: Rule) -> bool:
        """Whether this TRL predates ``rule`` (the current TRL predates none)."""
        if self.release is not None:
            return self.release < rule.release
        return self.date is not None and self.date < rule.merged

    @property
    def label(self) -> str:
        """``TRL code of 2025-02-05``, ``TRL 0.16.1`` or ``TRL (current)``."""
        if self.release is not None:
            return "TRL " + ".".join(map(str, self.release))
        return f"TRL code of {self.date}" if self.date else "TRL (current)"

    def pr(self, rule: Rule) -> str:
        """The rule's PR with the bound this version was compared with."""
        if self.release is not None:
            return f"PR {rule.pr} (TRL {rule.release_text})"
        return f"PR {rule.pr} ({rule.merged})"

    def absent_keys(self, given: set[str]) -> dict[str, str]:
        """The given keys this TRL's GRPOConfig does not have, each with why: TRL's parser
        leaves a config key it does not know unconsumed (``TrlParser.set_defaults_with_config``
        returns it, ``parse_args_and_config`` drops it: trl/scripts/utils.py at v0.14.0 and
        v0.18.0), so the run has that key's default."""
        out = {}
        for key in sorted(given):
            added, removed = KEYS_ADDED.get(key), KEYS_REMOVED.get(key)
            if added is not None and self.before(added):
                out[key] = f"{self.pr(added)} added it"
            elif removed is not None and not self.current and not self.before(removed):
                out[key] = f"{self.pr(removed)} removed it"
        return out


def parse_trl_version(text: str | None) -> TrlVersion:
    """``--trl-version``: None or ``current`` for the current TRL, else a release or a date."""
    if text is None or text.strip().lower() in ("", "current", "latest"):
        return TrlVersion()
    text = text.strip()
    m = _RELEASE.fullmatch(text)
    if m:
        release = (int(m[1]), int(m[2]), int(m[3] or 0))
        if release < GRPO_FIRST_RELEASE:
            raise SpecError(f"--trl-version {text}: GRPOTrainer first shipped in TRL 0.14.0; "
                            f"give {ACCEPTED}")  # fmt: skip
        return TrlVersion(release=release)
    try:
        day = datetime.date.fromisoformat(text)
    except ValueError:
        day = None
    if day is None or len(text) != 10:
        raise SpecError(f"--trl-version {text!r} is not a TRL version; give {ACCEPTED}")
    if text < GRPO_MERGED:
        raise SpecError(f"--trl-version {text}: TRL had no GRPOTrainer before {GRPO_MERGED} "
                        f"(PR 2565); give {ACCEPTED}")  # fmt: skip
    return TrlVersion(date=text)
