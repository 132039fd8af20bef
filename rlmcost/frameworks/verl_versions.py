"""verl's rollout running cap (``rollout.max_num_seqs``) by the verl code a config runs on:
``rlmcost import verl --verl-version``.

The engine's running cap bounds its decode batch, so it moves every generation phase whose
engine holds more sequences than the cap. What verl does with the key changed three times
(volcengine/verl, the stored history to b178a3cd5 of 2026-01-29; days are the merge commits'
UTC days; ``git tag --contains`` gives the first release):

=================  ======  ==========  ===========  ============================================
change             PR      merged      release      before it -> from it
=================  ======  ==========  ===========  ============================================
VLLM_RECEIVES      2960    2025-08-08  v0.6.0       the vLLM engine is built without it
                   beb624610                        (``vllm_rollout_spmd.py`` ``LLM(...)``,
                                                    ``vllm_async_server.py`` ``AsyncEngineArgs``)
                                                    -> ``max_num_seqs=config.max_num_seqs``
SGLANG_RECEIVES    3134    2025-08-20  v0.6.0       SGLang's ``Engine(...)`` without
                   de0b31cee                        ``max_running_requests`` (SGLang's own
                                                    default) -> ``max_running_requests =
                                                    config.get("max_num_seqs")``
                                                    (``sglang_rollout.py``; later
                                                    ``async_sglang_server.py``)
DEFAULT_256        4280    2026-01-23  none stored  ``max_num_seqs: 1024`` -> ``256``
                   e9405d70b           (after       (``trainer/config/rollout/rollout.yaml``;
                                       v0.7.0)      ``ppo_trainer.yaml`` to v0.4.1, 1024 at
                                                    every tag v0.1-v0.7.0)
=================  ======  ==========  ===========  ============================================

Before its change an engine runs its own default:

* vLLM in ``rollout.mode: sync`` (verl's default until PR 4106, bd512a0ad, 2025-11-18):
  ``vllm.LLM`` (``UsageContext.LLM_CLASS``) with no ``max_num_seqs``, so vLLM's own default,
  which depends on the vLLM that verl's ``setup.py`` admits at that day (:data:`VLLM_PINS`,
  the newest allowed: pip's choice) and, from vLLM 0.8.4, on the GPU
  (:func:`vllm_own_running_cap`): vLLM <= 0.6.3, the V0 engine: 256 on every GPU
  (``EngineArgs.max_num_seqs``); vLLM 0.8.2-0.8.3, the V1 engine (the default from 0.8.0;
  verl sets no ``VLLM_USE_V1``): 1024 on every GPU (vLLM PR 15357: "raised from 256 in V0
  to 1024 in V1"; PR 16158, opened 2025-04-07 after 0.8.3, took it back to 256 except
  H100/H200); vLLM 0.8.5: 1024 on GPUs of >= 70 GiB, else 256 (PR 17073, the memory rule,
  opened 2025-04-23, five days before 0.8.5: that 0.8.5 holds it is assumed); vLLM 0.9.1:
  the same but A100 (PR 17885, 2025-05-09, before 0.9.0; :func:`rlmcost.deployment.
  vllm_profile.llm_class_defaults`). Without the hardware the importer says 1024, as the
  NeMo RL preset does, and a note names the rest;
* vLLM in ``rollout.mode: async``: ``AsyncEngineArgs(...).create_engine_config()`` with no
  usage context (``vllm_async_server.py`` at beb624610^), for which ``get_batch_defaults``
  lists no cap, so it falls through to ``SchedulerConfig.__post_init__``'s 128
  (``vllm/config.py``, the V1 engine of the vLLM 0.8-0.9 that verl pinned then,
  ``vllm>=0.7.3,<=0.9.1`` in setup.py at beb624610^;
  :data:`rlmcost.frameworks.nemo_rl_vllm.ASYNC_ENGINE_MAX_NUM_SEQS`);
* SGLang: its own default from its KV pool (:mod:`rlmcost.deployment.sglang_limits`),
  ``--max-num-seqs 0`` over the preset's cap.

From verl's code on, vLLM (the async server's engine arguments, ``vllm_async_server.py``) and
SGLang (``async_sglang_server.py`` ``max_running_requests``) both receive ``max_num_seqs``;
TensorRT-LLM (``trtllm_async_server.py`` ``max_batch_size``, from PR 4280) is not modelled.
"""

from __future__ import annotations

import datetime
import re
from typing import TYPE_CHECKING

from rlmcost.errors import SpecError

if TYPE_CHECKING:
    from rlmcost.frameworks.config import Reader
    from rlmcost.frameworks.result import ImportedQuery
    from rlmcost.specs import HardwareSpec

VLLM_RECEIVES = "2025-08-08"
"""verl PR 2960 (beb624610, "max_num_seqs not take effect"), first in v0.6.0 (module doc)."""

SGLANG_RECEIVES = "2025-08-20"
"""verl PR 3134 (de0b31cee, "make sglang properly handle the max_num_seqs configuration"),
first in v0.6.0 (module doc)."""

DEFAULT_256 = "2026-01-23"
"""verl PR 4280 (e9405d70b): ``rollout.yaml`` ``max_num_seqs`` 1024 -> 256 (module doc)."""

REMOVE_PADDING = "2025-12-09"
"""verl PR 4461 (561752996, "enhances TrainingWorker"), first in v0.7.0: ``model/hf_model.yaml``
``use_remove_padding`` False -> True (``_generated_ppo_trainer.yaml`` alike): from this day a
config that does not set it runs its FSDP workers unpadded (still so at b178a3cd5)."""

NON_REENTRANT = "2025-01-18"
"""verl PR 114 (5a94e14df, "set use_reentrant=False when enable gradient checkpointing"), first
in v0.2: its FSDP workers' ``gradient_checkpointing_enable`` passes ``use_reentrant=False``;
before it transformers' default, reentrant (no early stop: :mod:`rlmcost.perf.ckpt_early_stop`).
"""

VLLM_PINS = (
    ("2025-03-27", "0.8.2"), ("2025-04-21", "0.8.3"), ("2025-05-14", "0.8.5"),
    ("2025-07-28", "0.9.1"), ("2025-10-25", "0.11.0"), ("2025-12-29", "0.12.0"),
)  # fmt: skip
"""The newest vLLM verl's ``setup.py`` admits from each day (merge commit's UTC day): before
the first, ``vllm<=0.6.3`` (v0.1 to v0.3.0.rc0, V0 engines); PR 769 (1b8b0e83b)
``vllm<=0.8.2``, PR 1186 (64672aef3) ``<=0.8.3``, PR 1505 (43782a24b) ``<=0.8.5``, PR 2747
(d255783a0) ``>=0.7.3,<=0.9.1``, which holds past :data:`VLLM_RECEIVES`, PR 3901 (ab4c04b0c)
``>=0.8.5,<=0.11.0``, PR 4653 (99a3ed060) ``<=0.12.0`` (still at b178a3cd5). The pin is also
the engine's ``--vllm-version`` where rlmcost models it (:func:`vllm_pin`). The v0.3 line
straddles PR 769 (v0.3.0.rc0 ``<=0.6.3``; v0.3.0.post1 of 2025-04-02 ``<=0.8.2``):
``--verl-version 0.3`` is the line's first day (:data:`RELEASES`), the V0 engine; give
2025-04-02 for post1."""


RELEASES = {
    (0, 1): "2024-12-11", (0, 2): "2025-02-15", (0, 3): "2025-03-26", (0, 4): "2025-06-06",
    (0, 5): "2025-07-23", (0, 6): "2025-10-15", (0, 7): "2026-01-05",
}  # fmt: skip
"""verl release lines and the day (UTC) of their first tag (v0.1, v0.2, v0.3.0.rc0, v0.4.0,
v0.5.0, v0.6.0, v0.7.0): every tag of a line falls on the same side of every change above
(v0.3.0.post1 2025-04-02, v0.4.1 2025-06-26, v0.6.1 2025-11-14)."""

CURRENT_DEFAULT = 256
"""``max_num_seqs`` of verl's current ``rollout.yaml`` (b178a3cd5; since :data:`DEFAULT_256`),
the verl preset's value."""

_ACCEPTED = "a release (0.5.0, v0.6.1), the day of the verl code (YYYY-MM-DD) or 'current'"


def parse_verl_version(text: str | None) -> str | None:
    """``--verl-version``: the day of the verl code (None: the current verl, as for a release
    newer than :data:`RELEASES` holds)."""
    if text is None or text.strip().lower() in ("", "current", "main"):
        return None
    t = text.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", t):
        try:
            return datetime.date.fromisoformat(t).isoformat()
        except ValueError:
            raise SpecError(f"--verl-version {t}: no such day; give {_ACCEPTED}") from None
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:\.?(?:post|rc)\d*)?", t)
    if m is None:
        raise SpecError(f"--verl-version {text!r} is not a verl version; give {_ACCEPTED}")
    line = (int(m[1]), int(m[2]))
    if line < min(RELEASES):
        raise SpecError(f"--verl-version {text}: verl's first release is 0.1; give {_ACCEPTED}")
    return RELEASES.get(line)  # a release after the stored ones: the current code


def vllm_pin(day: str) -> str:
    """The newest vLLM verl's ``setup.py`` admits on ``day`` (:data:`VLLM_PINS`; before the
    first, 0.6.3)."""
    return next((v for since, v in reversed(VLLM_PINS) if day >= since), "0.6.3")


def vllm_own_running_cap(day: str, hardware: HardwareSpec) -> tuple[int, str]:
    """``(max_num_seqs, why)``: the running cap vLLM's ``LLM`` class gives itself under the
    verl code of ``day`` (before :data:`VLLM_RECEIVES`) on ``hardware`` (module doc).

    Device memory is the spec's usable capacity (what ``torch.cuda.mem_get_info`` reports as
    total, as vLLM's ``get_device_total_memory`` reads it); the A100 test is on its name.
    """
    from rlmcost.deployment.vllm_profile import LARGE_GPU_BYTES, llm_class_defaults

    vllm = vllm_pin(day)
    if vllm == "0.6.3":
        return 256, "vLLM <= 0.6.3 (verl's setup.py then), V0 EngineArgs.max_num_seqs 256"
    if vllm in ("0.8.2", "0.8.3"):
        return 1024, (f"vLLM <= {vllm} (verl's setup.py then), the V1 engine's 1024 on every "
                      "GPU (before vLLM PR 16158)")  # fmt: skip
    gib = hardware.hbm_capacity_bytes / 2**30
    if vllm == "0.8.5":
        cap = 1024 if hardware.hbm_capacity_bytes >= LARGE_GPU_BYTES else 256
        rule = "1024 on GPUs of >= 70 GiB, else 256 (vLLM PR 17073, assumed in 0.8.5)"
    else:
        cap = llm_class_defaults(hardware.hbm_capacity_bytes, hardware.name)[0]
        rule = "1024 on GPUs of >= 70 GiB but A100, else 256 (vLLM PR 17885)"
    return cap, f"vLLM <= {vllm} (verl's setup.py then): {rule}; {hardware.name} {gib:.0f} GiB"


def running_cap(r: Reader, q: ImportedQuery, rollout: str, engine: str, day: str | None,
                hardware: HardwareSpec | None = None) -> None:  # fmt: skip
    """``--max-num-seqs`` from ``{rollout}.max_num_seqs`` under verl code of ``day`` (None:
    the current verl) on ``engine`` and ``hardware`` (None: not given) (module doc); left out
    where it is the preset's :data:`CURRENT_DEFAULT`."""
    key = f"{rollout}.max_num_seqs"
    given = r.integer(key, None)
    default = 1024 if day is not None and day < DEFAULT_256 else CURRENT_DEFAULT
    shown = f"{key}={given if given is not None else default}"
    code = f"verl of {day}" if day else "verl"
    if engine == "sglang" and day is not None and day < SGLANG_RECEIVES:
        q.convert(shown, "--max-num-seqs", 0, f"{code} builds SGLang's Engine without "
                  "max_running_requests (before PR 3134): SGLang's own running cap, from its "
                  "KV pool", CURRENT_DEFAULT)  # fmt: skip
    elif engine == "vllm" and day is not None and day < VLLM_RECEIVES:
        if r.text(f"{rollout}.mode", "sync") != "sync":  # sync: verl's default then
            from rlmcost.frameworks.nemo_rl_vllm import ASYNC_ENGINE_MAX_NUM_SEQS

            q.convert(shown, "--max-num-seqs", ASYNC_ENGINE_MAX_NUM_SEQS, f"{code} builds the "
                      "async server's AsyncEngineArgs without it (before PR 2960): vLLM's "
                      "ENGINE_CONTEXT default, SchedulerConfig's 128", CURRENT_DEFAULT)
        elif hardware is not None:
            cap, why = vllm_own_running_cap(day, hardware)
            q.convert(shown, "--max-num-seqs", cap, f"{code} builds vllm.LLM without it "
                      f"(before PR 2960): vLLM's own default, {why}", CURRENT_DEFAULT)
        else:
            q.convert(shown, "--max-num-seqs", 1024, f"{code} builds vllm.LLM without it "
                      "(before PR 2960): vLLM's own default, taken as 1024 (V1 on GPUs of "
                      ">= 70 GiB other than A100); 256 on A100 and smaller GPUs from vLLM "
                      "0.8.4 and on vLLM's V0 engine (verl before 2025-03-27): give the "
                      "hardware", CURRENT_DEFAULT)  # fmt: skip
    elif given is not None or day is not None:  # else the preset's, unsaid
        how = "as given" if given is not None else \
            f"rollout.yaml's default at {code} (1024 until PR 4280, then 256)"  # fmt: skip
        q.convert(shown, "--max-num-seqs", given if given is not None else default,
                  f"the {engine} engine's running cap, {how}", CURRENT_DEFAULT)
