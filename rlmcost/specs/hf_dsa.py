"""DeepSeek Sparse Attention configs: ``deepseek_v32`` (DeepSeek-V3.2) and ``glm_moe_dsa``
(GLM-5, GLM-5.1, GLM-5.2) as transformers 5.24 reads them.

Both are DeepSeek-V3's MLA and MoE (``rlmcost.specs.hf_config._deepseek_fields``) plus a
lightning indexer per layer (:mod:`rlmcost.blocks.sparse`). Sources:
models/deepseek_v32/configuration_deepseek_v32.py and models/glm_moe_dsa/
configuration_glm_moe_dsa.py (their defaults when a key is missing: 64 and 32 index heads,
index_head_dim 128, index_topk 2048, first_k_dense_replace 3), and ``GlmMoeDsaConfig.
__post_init__`` for which layers run their own indexer (``indexer_types``, else
``index_topk_pattern`` of F/S, else ``index_topk_freq`` / ``index_skip_topk_offset``: layer i
is ``full`` when max(i - offset + 1, 0) is a multiple of freq; freq 1, every layer, by default).
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError

DSA_TYPES = ("deepseek_v32", "glm_moe_dsa")

#: transformers 5.24's defaults (configuration_deepseek_v32.py, configuration_glm_moe_dsa.py).
DSA_DEFAULTS: dict[str, dict[str, int]] = {
    "deepseek_v32": {"index_n_heads": 64, "index_head_dim": 128, "index_topk": 2048,
                     "first_k_dense_replace": 3},
    "glm_moe_dsa": {"index_n_heads": 32, "index_head_dim": 128, "index_topk": 2048,
                    "first_k_dense_replace": 3},
}  # fmt: skip

DSA_NOTE = (
    "DeepSeek Sparse Attention: the main attention over the indexer's top-k keys in the absorbed "
    "form of FlashMLA's sparse kernels; the lightning indexer's scores over every earlier key "
    "(forward only, no gradient) and its key cache counted in the KV dtype (engines keep it in "
    "fp8 with fp32 scales: an upper bound); the top-k selection and gather are not counted "
    "(not matrix products); training activations are MLA's expanded tensors plus the int32 "
    "top-k indices"
)


def dsa_config(cfg: dict[str, Any], mt: str) -> dict[str, Any]:
    """``cfg`` with transformers' defaults for the keys a DSA config leaves out."""
    return {**DSA_DEFAULTS[mt], **{k: v for k, v in cfg.items() if v is not None}}


def indexer_types(cfg: dict[str, Any], mt: str, n_layers: int, path: str) -> list[str]:
    """Per layer ``full`` (runs its indexer) or ``shared`` (reuses the previous top-k)."""
    if mt == "deepseek_v32":
        return ["full"] * n_layers
    types = cfg.get("indexer_types")
    pattern = cfg.get("index_topk_pattern")
    if types is None and pattern is not None:
        types = [{"F": "full", "S": "shared"}.get(c, c) for c in pattern]
    if types is None:
        freq = max(int(cfg.get("index_topk_freq", 1) or 1), 1)
        offset = int(cfg.get("index_skip_topk_offset", 2))
        types = ["full" if max(i - offset + 1, 0) % freq == 0 else "shared"
                 for i in range(n_layers)]  # fmt: skip
    if not isinstance(types, list) or len(types) != n_layers or set(types) - {"full", "shared"}:
        raise SpecError(f"{path}: indexer_types must list 'full' or 'shared' for each of the "
                        f"{n_layers} layers")  # fmt: skip
    if types[0] != "full":
        raise SpecError(f"{path}: the first layer must run its indexer (indexer_types[0] = "
                        "'full'): a 'shared' layer reuses an earlier layer's top-k")  # fmt: skip
    return types


def dsa_fields(cfg: dict[str, Any], mt: str, n_layers: int, path: str) -> dict[str, Any]:
    """The ModelSpec's DSA fields: index_topk, index_heads, index_head_dim, index_layers."""
    if cfg.get("q_lora_rank") is None:
        raise SpecError(f"{path}: a {mt} model needs q_lora_rank (its indexer reads the query "
                        "latent)")  # fmt: skip
    mlp = cfg.get("mlp_layer_types")
    first = int(cfg["first_k_dense_replace"])
    if mlp is not None and list(mlp) != ["dense"] * min(first, n_layers) + ["sparse"] * max(
        n_layers - first, 0
    ):
        raise SpecError(f"{path}: mlp_layer_types other than first_k_dense_replace dense layers "
                        "then MoE layers are not supported")  # fmt: skip
    types = indexer_types(cfg, mt, n_layers, path)
    return {
        "index_topk": int(cfg["index_topk"]),
        "index_heads": int(cfg["index_n_heads"]),
        "index_head_dim": int(cfg["index_head_dim"]),
        "index_layers": types.count("full"),
    }
