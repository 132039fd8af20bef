"""The seven inter-model configurations of Table IX as a string enum (values = CLI spellings).

This module imports nothing heavy so the CLI can build its options from it at start-up.
"""

from __future__ import annotations

from enum import StrEnum


class Config(StrEnum):
    """A Table IX configuration (seed paper §IV, Table IX caption)."""

    BASELINE = "baseline"  # one group, invocations one after another: depths add
    AC_SHARED = "ac-shared"  # shared actor-critic backbone pi_SH with two heads (§IV-A)
    DISAGGREGATED = "disaggregated"  # one group per model, concurrent within a stage (§IV-B)
    HYBRID = "hybrid"  # TP generation, TP/PP assessment, ZeRO-3 training, resharding (§IV-D)
    FUSION = "fusion"  # inter-stage streaming + intra-stage interleaving (§IV-C, RLHFuse)
    ASYNC = "async"  # bounded staleness: rollout and training overlap; shadow copy (§IV-E)
    COMBINED = "combined"  # async + disaggregated + hybrid (RLHFuse-style, Table IX caption)

    @property
    def label(self) -> str:
        return {
            Config.BASELINE: "Baseline",
            Config.AC_SHARED: "AC shared",
            Config.DISAGGREGATED: "Disaggregated",
            Config.HYBRID: "Hybrid",
            Config.FUSION: "Stage fusion",
            Config.ASYNC: "Asynchronous",
            Config.COMBINED: "Combined",
        }[self]

    @property
    def summary(self) -> str:
        """One line: what the configuration does (Table IX caption, §IV)."""
        return {
            Config.BASELINE: "all models on one device group, one invocation after another",
            Config.AC_SHARED: "one group; actor and critic share a backbone with two heads",
            Config.DISAGGREGATED: "one device group per model; a stage's models run concurrently",
            Config.HYBRID: "one group; TP for generation, TP/PP for assessment, ZeRO-3 for "
            "training, with resharding",
            Config.FUSION: "one group; assessment streams finished samples during generation, "
            "actor and critic training pipelines interleave",
            Config.ASYNC: "rollout group (generation + assessment) and training group overlap "
            "under bounded staleness; shadow copy of the actor",
            Config.COMBINED: "asynchronous + one group per invocation kind and model + hybrid "
            "layouts (RLHFuse-style)",
        }[self]


CUSTOM = "custom"
"""The name of a placement given by ``--groups`` (partial colocation)."""
