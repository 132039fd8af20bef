"""A trainer's Megatron-core pipeline split options (``TrainLayout.pp_split``), as a user or an
importer states them; their meaning and checks: :mod:`rlmcost.parallel.pipeline_split`."""

# No `from __future__ import annotations`: pydantic takes the fields' annotations as objects
# (as strings it compiles each as a ForwardRef at every start); methods quote their own class.
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from rlmcost.specs.validation import Checked


class PipelineSplit(Checked):
    """Megatron-core's uneven pipeline split (``megatron/core/transformer/transformer_block.py``
    ``get_num_layers_to_build`` @d98e8a64dd): explicit first/last stage layers, the
    embedding and the loss counted as layers, or a layout string
    (``pipeline_parallel_layer_layout.py``). None / False everywhere: rlmcost's even split."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    first_layers: int | None = Field(default=None, ge=1, description="layers on the first "
        "pipeline rank (Megatron num_layers_in_first_pipeline_stage, "
        "--decoder-first-pipeline-num-layers); None: the even split")  # fmt: skip
    last_layers: int | None = Field(default=None, ge=1, description="layers on the last "
        "pipeline rank (num_layers_in_last_pipeline_stage, --decoder-last-...)")  # fmt: skip
    embedding_slot: bool = Field(default=False, description="the embedding counts as one "
        "layer in the split (account_for_embedding_in_pipeline_split)")  # fmt: skip
    loss_slot: bool = Field(default=False, description="the output layer and loss count as "
        "one layer (account_for_loss_in_pipeline_split)")  # fmt: skip

    layout: str | None = Field(default=None, description="Megatron-core's "
        "--pipeline-model-parallel-layout string over pp x v virtual stages, e.g. "
        "'Et*4|(t*4|)*14tL' (rlmcost.parallel.pp_layout); sets v = stages / pp")  # fmt: skip

    @field_validator("layout", mode="before")
    @classmethod
    def _layout(cls, v: object) -> object:
        if v is None:
            return v
        from rlmcost.parallel.pp_layout import expand, layout_text

        text = layout_text(v)  # a list of stages, as Megatron-Bridge's recipes set it
        expand(text)  # unknown characters: one line (ValueError); the rest at check_layout
        return text

    def layout_fields(self) -> dict[str, Any]:
        """The :class:`~rlmcost.parallel.layout.Layout` fields of this split."""
        return {"pp_first_layers": self.first_layers, "pp_last_layers": self.last_layers,
                "pp_embedding_slot": self.embedding_slot, "pp_loss_slot": self.loss_slot,
                "pp_layout": self.layout}  # fmt: skip

    def flags(self) -> list[str]:
        """The command-line flags that state this split (``rlmcost.run.command``)."""
        words = [] if self.first_layers is None else ["--pp-first-layers", str(self.first_layers)]
        words += [] if self.last_layers is None else ["--pp-last-layers", str(self.last_layers)]
        words += ["--pp-embedding-slot"] if self.embedding_slot else []
        words += ["--pp-layout", self.layout] if self.layout is not None else []
        return words + (["--pp-loss-slot"] if self.loss_slot else [])
