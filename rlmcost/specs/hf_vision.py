"""The vision towers of Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5 and GLM-4.1V (``glm4v``): the
config's vision_config.

The language model of these checkpoints is a Qwen2 decoder read like ``qwen2``; the vision
tower's parameters go into the spec's ``encoder_params`` (exact; tests/test_model_types.py
builds ``Qwen2VLForConditionalGeneration`` / ``Qwen2_5_VLForConditionalGeneration`` on the
meta device). Layer structure after transformers ``models/qwen2_vl/modeling_qwen2_vl.py``
(``PatchEmbed``, ``Qwen2VLVisionBlock``, ``PatchMerger``) and
``models/qwen2_5_vl/modeling_qwen2_5_vl.py`` (``Qwen2_5_VisionPatchEmbed``,
``Qwen2_5_VLVisionBlock``, ``Qwen2_5_VLPatchMerger``):

* patch embedding: Conv3d without bias, ``c * t * p^2 * d_v`` weights (c input channels,
  t temporal patch, p spatial patch);
* ``depth`` blocks: two norms (LayerNorm, 2 d_v, in Qwen2-VL; RMSNorm, d_v, in Qwen2.5-VL), a
  fused qkv projection and an output projection, all with biases, and an MLP with biases:
  ``fc1``/``fc2`` of width ``mlp_ratio * d_v`` (Qwen2-VL) or gated ``gate/up/down`` of width
  ``intermediate_size`` (Qwen2.5-VL);
* the merger: a norm of d_v, then ``Linear(m^2 d_v, m^2 d_v)`` and ``Linear(m^2 d_v, d_out)``
  with biases (m = ``spatial_merge_size``; d_out the language model's width).

The vision width is ``embed_dim`` in Qwen2-VL (its ``hidden_size`` is d_out) and ``hidden_size``
in Qwen2.5-VL (``out_hidden_size`` is d_out). Defaults are those of transformers'
``Qwen2VLVisionConfig`` / ``Qwen2_5_VLVisionConfig``.

The Qwen3-VL tower (``qwen3_vl``, ``qwen3_vl_moe``; transformers 5.24
``models/qwen3_vl/modeling_qwen3_vl.py``: ``Qwen3VLVisionPatchEmbed``, ``Qwen3VLVisionBlock``,
``Qwen3VLVisionPatchMerger``, ``Qwen3VLVisionModel``) is Qwen2-VL's block (two LayerNorms with
biases, fused qkv and proj with biases, ``linear_fc1``/``linear_fc2`` of width
``intermediate_size`` with biases) and merger, plus: a bias on the Conv3d patch embedding
(d_v), a learned position table of ``num_position_embeddings`` x d_v (bilinearly resampled per
image: no matmul), and one more merger per ``deepstack_visual_indexes`` entry (its LayerNorm
over m^2 d_v, after the spatial merge) fed by that block's output and added into the first
decoder layers. Every block attends over the whole image (or video frame). Qwen3.5
(``qwen3_5``, ``qwen3_5_moe``; ``Qwen3_5VisionModel`` deletes the deepstack mergers) is the
same tower without them. Defaults: ``Qwen3VLVisionConfig`` (depth 27, width 1152, MLP 4304,
16 heads, patch 16, 2304 positions, deepstack [8, 16, 24]; ``Qwen3_5VisionConfig``: none).

GLM-4.1V (``glm4v``; transformers ``models/glm4v/modeling_glm4v.py``, 5.24: ``Glm4vVisionModel``)
differs: the Conv3d patch embedding has a bias (d_v) and an RMSNorm after it; a learned
absolute position table of (image_size / p)^2 x d_v (``Glm4vVisionEmbeddings``, resampled by
``grid_sample``, no matmul); blocks of two RMSNorms, a fused qkv with ``attention_bias``
(default false), an output projection without bias and a gated MLP *of width d_out*
(``Glm4VisionMlp`` takes ``out_hidden_size``), no biases; after the blocks an RMSNorm, a Conv2d
``downsample`` (d_v -> d_out over m x m patches, with bias) and the merger
(``Glm4vVisionPatchMerger``: a d_out x d_out projection, a LayerNorm of d_out, a gated MLP
d_out -> ``intermediate_size`` -> d_out, no biases). Every block attends over the whole image.
GLM-4.5V / GLM-4.6V (``glm4v_moe``; ``Glm4vMoeVisionModel``, models/glm4v_moe/
modeling_glm4v_moe.py) is this tower, class for class, in front of a GLM-4.5-Air decoder.

Kimi K2.5 (``kimi_k25``; transformers 5.24 models/kimi_k25/modeling_kimi_k25.py:
``Kimi_K25VisionModel``, ``Kimi_K25MultimodalProjection``) is MoonViT: a Conv2d patch
embedding with bias (3 p^2 d_v + d_v, one frame: t = 1), a learned position grid of
``pos_emb_height`` x ``pos_emb_width`` x d_v (bicubically resampled, no matmul), blocks of two
LayerNorms with biases, q/k/v and output projections with biases and an MLP ``fc1``/``fc2`` of
width ``intermediate_size`` with biases, a final LayerNorm; frames pooled over time (no
parameters), then the projector: a LayerNorm of d_v, ``Linear(m^2 d_v, m^2 d_v)`` and
``Linear(m^2 d_v, d_out)`` with biases over each m x m merged token (m the
``merge_kernel_size`` side). The published config.json names the sizes ``vt_hidden_size``,
``vt_num_hidden_layers``, ``vt_num_attention_heads``, ``vt_intermediate_size``,
``init_pos_emb_height`` / ``_width`` (its remote code's names): read as aliases. Every block
attends over the whole image.
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError

#: transformers' vision-config defaults, per model_type (published configs omit some of them).
VISION_DEFAULTS: dict[str, dict[str, Any]] = {
    "qwen2_vl": dict(depth=32, embed_dim=1280, hidden_size=3584, mlp_ratio=4, num_heads=16,
                     in_channels=3, patch_size=14, spatial_merge_size=2, temporal_patch_size=2),
    "qwen2_5_vl": dict(depth=32, hidden_size=3584, intermediate_size=3420, num_heads=16,
                       in_channels=3, patch_size=14, spatial_merge_size=2, temporal_patch_size=2,
                       out_hidden_size=3584, window_size=112,
                       fullatt_block_indexes=[7, 15, 23, 31]),
    "qwen3_vl": dict(depth=27, hidden_size=1152, intermediate_size=4304, num_heads=16,
                     in_channels=3, patch_size=16, spatial_merge_size=2, temporal_patch_size=2,
                     out_hidden_size=3584, num_position_embeddings=2304,
                     deepstack_visual_indexes=[8, 16, 24]),
    "glm4v": dict(depth=24, hidden_size=1536, intermediate_size=13696, num_heads=12,
                  in_channels=3, image_size=336, patch_size=14, spatial_merge_size=2,
                  temporal_patch_size=2, out_hidden_size=4096, attention_bias=False),
}  # fmt: skip
VISION_DEFAULTS["qwen3_5"] = {**VISION_DEFAULTS["qwen3_vl"], "deepstack_visual_indexes": []}
VISION_DEFAULTS["glm4v_moe"] = VISION_DEFAULTS["glm4v"]  # Glm4vMoeVisionConfig: the same
#: ``Kimi_K25VisionConfig``'s defaults (transformers 5.24 configuration_kimi_k25.py)
VISION_DEFAULTS["kimi_k25"] = dict(num_hidden_layers=27, hidden_size=1152, intermediate_size=4304,
                                   num_attention_heads=16, patch_size=14, pos_emb_height=64,
                                   pos_emb_width=64, merge_kernel_size=[2, 2])  # fmt: skip
#: the published Kimi K2.5 config.json's names (its remote code's) -> transformers'
KIMI_ALIASES = {"vt_hidden_size": "hidden_size", "vt_num_hidden_layers": "num_hidden_layers",
                "vt_num_attention_heads": "num_attention_heads",
                "vt_intermediate_size": "intermediate_size",
                "init_pos_emb_height": "pos_emb_height", "init_pos_emb_width": "pos_emb_width"}
#: model_type of a vision-language checkpoint -> its decoder's model_type, as read here
VL_DECODER = {"qwen2_vl": "qwen2", "qwen2_5_vl": "qwen2", "glm4v": "glm4",
              "glm4v_moe": "glm4_moe", "kimi_k25": "deepseek_v3"}  # fmt: skip
#: ``Glm4vMoeTextConfig``'s defaults where a missing key would read otherwise (transformers
#: 5.24 configuration_glm4v_moe.py: q/k/v biases, one shared expert, one leading dense layer)
GLM4V_MOE_TEXT_DEFAULTS = dict(attention_bias=True, n_shared_experts=1, first_k_dense_replace=1)
_KEYS = ("depth", "embed_dim", "hidden_size", "intermediate_size", "num_heads", "in_channels",
         "patch_size", "spatial_merge_size", "temporal_patch_size", "out_hidden_size",
         "window_size", "num_position_embeddings", "image_size", "num_hidden_layers",
         "num_attention_heads", "pos_emb_height", "pos_emb_width")  # fmt: skip


def decoder_config(cfg: dict[str, Any], vl: str, path: str) -> dict[str, Any]:
    """The decoder's keys of a ``vl`` checkpoint's (already merged) config, as its text
    model reads them: GLM-4.1V's attention has q/k/v biases always and head_dim = hidden /
    heads (``Glm4vTextAttention``); GLM-4.5V's takes ``Glm4vMoeTextConfig``'s defaults and has
    no q/k norm whatever ``use_qk_norm`` says (``Glm4vMoeTextAttention``)."""
    if vl == "glm4v":
        d, h = cfg.get("hidden_size"), cfg.get("num_attention_heads")
        if isinstance(d, int) and isinstance(h, int) and h:
            return {**cfg, "attention_bias": True, "head_dim": d // h}
    if vl == "glm4v_moe":
        return {**GLM4V_MOE_TEXT_DEFAULTS, **cfg, "use_qk_norm": False}
    return cfg


def vision_shape(cfg: dict[str, Any], mt: str, path: str) -> dict[str, int]:
    """``{d_v, d_out, depth, width, heads, c, t, p, m, gated, full, window}`` of the tower (with
    ``conv_bias``, ``pos`` and ``deepstack`` for the Qwen3-VL / Qwen3.5 tower, ``mt``
    ``qwen3_vl`` or ``qwen3_5``; GLM: also ``glm``, ``merger_width``, ``positions``,
    ``qkv_bias``); one-line SpecError naming the field when one is missing, not a positive
    integer, or inconsistent."""
    vc = cfg.get("vision_config")
    if not isinstance(vc, dict):
        raise SpecError(f"{path}: a {mt} config needs a vision_config object")
    mt = "glm4v" if mt == "glm4v_moe" else mt  # the same tower (module docstring)
    vc = {**VISION_DEFAULTS[mt], **{k: v for k, v in vc.items() if v is not None}}
    if "in_chans" in vc:  # the published checkpoints' spelling
        vc["in_channels"] = vc["in_chans"]
    if mt == "kimi_k25":
        vc.update({new: vc[old] for old, new in KIMI_ALIASES.items() if vc.get(old) is not None})
    for key in (*_KEYS, "mlp_ratio"):
        v = vc.get(key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 2**20:
            raise SpecError(
                f"{path}: vision_config.{key}={v!r} is implausible (expected an integer in "
                f"1..{2**20})"
            )
    extra: dict[str, int] = {}
    if mt == "kimi_k25":
        return _kimi_shape(cfg, vc, path)
    if mt in ("qwen3_vl", "qwen3_5"):
        d_v, d_out, gated = vc["hidden_size"], vc["out_hidden_size"], False
        width, full, window = vc["intermediate_size"], vc["depth"], 0
        # Qwen3_5VisionModel deletes the deepstack mergers whatever the config lists
        deepstack = _deepstack(vc, path) if mt == "qwen3_vl" else 0
        extra = dict(conv_bias=1, pos=vc["num_position_embeddings"], deepstack=deepstack)
    elif mt == "qwen2_vl":
        d_v, d_out, gated = vc["embed_dim"], vc["hidden_size"], False
        width = vc["mlp_ratio"] * d_v
        full, window = vc["depth"], 0  # every block attends over the whole image
    elif mt == "glm4v":  # the blocks' MLP is d_out wide, the merger's intermediate_size
        d_v, d_out, gated = vc["hidden_size"], vc["out_hidden_size"], True
        width, full, window = d_out, vc["depth"], 0
        extra = dict(glm=1, merger_width=vc["intermediate_size"],
                     positions=(vc["image_size"] // vc["patch_size"]) ** 2,
                     qkv_bias=int(bool(vc["attention_bias"])))  # fmt: skip
    else:
        d_v, d_out, gated = vc["hidden_size"], vc["out_hidden_size"], True
        width = vc["intermediate_size"]
        full, window = _windows(vc, path)
    if d_v % vc["num_heads"]:
        raise SpecError(
            f"{path}: vision_config.num_heads={vc['num_heads']} must divide the vision width {d_v}"
        )
    return dict(d_v=d_v, d_out=d_out, depth=vc["depth"], width=width, heads=vc["num_heads"],
                c=vc["in_channels"], t=vc["temporal_patch_size"], p=vc["patch_size"],
                m=vc["spatial_merge_size"], gated=int(gated), full=full,
                window=window, **extra)  # fmt: skip


def _kimi_shape(cfg: dict[str, Any], vc: dict[str, Any], path: str) -> dict[str, int]:
    """:func:`vision_shape` of a Kimi K2.5 tower (module docstring)."""
    k = vc["merge_kernel_size"]
    if not (isinstance(k, list) and len(k) == 2 and k[0] == k[1] and isinstance(k[0], int)
            and not isinstance(k[0], bool) and 1 <= k[0] <= 64):  # fmt: skip
        raise SpecError(f"{path}: vision_config.merge_kernel_size={k!r} must be a square "
                        "[k, k] of small positive integers")  # fmt: skip
    d_v, heads = vc["hidden_size"], vc["num_attention_heads"]
    if d_v % heads:
        raise SpecError(f"{path}: vision_config num_attention_heads={heads} must divide the "
                        f"vision width {d_v}")  # fmt: skip
    norm_width = cfg.get("projection_hidden_size") or vc.get("mm_hidden_size") or d_v
    if norm_width != d_v:
        raise SpecError(f"{path}: the projector's norm width {norm_width!r} (mm_hidden_size) "
                        f"differs from the vision width {d_v}; mend one of them")  # fmt: skip
    text = cfg.get("text_config")
    text = text if isinstance(text, dict) else {}
    d_out = text.get("hidden_size") or vc.get("text_hidden_size") or 0
    return dict(d_v=d_v, d_out=d_out, depth=vc["num_hidden_layers"],
                width=vc["intermediate_size"], heads=heads, c=3, t=1, p=vc["patch_size"],
                m=k[0], gated=0, full=vc["num_hidden_layers"], window=0, conv_bias=1,
                pos=vc["pos_emb_height"] * vc["pos_emb_width"], final_norm=1)  # fmt: skip


def _deepstack(vc: dict[str, Any], path: str) -> int:
    """Deepstack mergers of a Qwen3-VL tower: one per ``deepstack_visual_indexes`` entry
    (``Qwen3VLVisionModel.deepstack_merger_list``), each a block index below ``depth``."""
    idx = vc.get("deepstack_visual_indexes") or []
    if not isinstance(idx, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < vc["depth"] for i in idx
    ):
        raise SpecError(f"{path}: vision_config.deepstack_visual_indexes={idx!r} must list block "
                        f"indexes below depth={vc['depth']}")  # fmt: skip
    return len(idx)


def _windows(vc: dict[str, Any], path: str) -> tuple[int, int]:
    """(blocks with full attention, patches per attention window) of a Qwen2.5-VL tower:
    ``fullatt_block_indexes`` attend over the whole image, the others within windows of
    ``window_size // spatial_merge_size // patch_size`` merged tokens a side, m^2 patches
    each (transformers ``Qwen2_5_VisionTransformerPretrainedModel.get_window_index``)."""
    idx = vc["fullatt_block_indexes"]
    if not isinstance(idx, list) or not all(isinstance(i, int) and i >= 0 for i in idx):
        raise SpecError(f"{path}: vision_config.fullatt_block_indexes={idx!r} must be a list of "
                        "block indexes (non-negative integers)")  # fmt: skip
    side = vc["window_size"] // vc["spatial_merge_size"] // vc["patch_size"]
    if side < 1:
        raise SpecError(f"{path}: vision_config.window_size={vc['window_size']} is below one "
                        "merged token (spatial_merge_size x patch_size); raise it")  # fmt: skip
    full = len({i for i in idx if i < vc["depth"]})
    return full, (side * vc["spatial_merge_size"]) ** 2


def vision_params(s: dict[str, int]) -> int:
    """Parameters of the tower of shape ``s`` (:func:`vision_shape`), as ``sum(p.numel())``."""
    d, w, m2 = s["d_v"], s["width"], s["m"] ** 2
    if s.get("glm"):  # module docstring: GLM-4.1V's tower
        o, ctx = s["d_out"], s["merger_width"]
        block = 2 * d + 3 * d * d + 3 * d * s["qkv_bias"] + d * d + 3 * d * w
        embed = s["c"] * s["t"] * s["p"] ** 2 * d + d + d + s["positions"] * d
        after = d + d * m2 * o + o + o * o + 2 * o + 3 * o * ctx
        return embed + s["depth"] * block + after
    norm = d if s["gated"] else 2 * d  # RMSNorm (Qwen2.5-VL) or LayerNorm with bias (Qwen2-VL)
    attn = 3 * d * d + 3 * d + d * d + d
    mlp = 3 * d * w + 2 * w + d if s["gated"] else 2 * d * w + w + d
    layers = m2 * d * m2 * d + m2 * d + m2 * d * s["d_out"] + s["d_out"]
    # the deepstack mergers' LayerNorms span the merged width m^2 d_v (Qwen3-VL)
    mergers = norm + layers + s.get("deepstack", 0) * (2 * m2 * d + layers)
    embed = s["c"] * s["t"] * s["p"] ** 2 * d + (s.get("conv_bias", 0) + s.get("pos", 0)) * d
    final = s.get("final_norm", 0) * 2 * d  # Kimi K2.5's final LayerNorm
    return embed + s["depth"] * (2 * norm + attn + mlp) + mergers + final


def vision_flops_per_patch(s: dict[str, int]) -> int:
    """Forward matmul FLOPs per patch (one image token is m^2 patches), 2 FLOPs per
    multiply-add, without attention scores (they grow with the patches a window or image
    holds): patch embedding, per block qkv, output projection and MLP, and the merger's two
    layers shared by m^2 patches (once more per Qwen3-VL deepstack merger). Convention of
    tests/FLOP_CONVENTIONS.md (matmuls only)."""
    d, w, m2 = s["d_v"], s["width"], s["m"] ** 2
    mlp = (3 if s["gated"] else 2) * d * w
    merger = (1 + s.get("deepstack", 0)) * (m2 * d * m2 * d + m2 * d * s["d_out"]) // m2
    if s.get("glm"):  # the downsample conv, then the merger on each merged token
        o = s["d_out"]
        merger = d * o + (o * o + 3 * o * s["merger_width"]) // m2
    return 2 * (s["c"] * s["t"] * s["p"] ** 2 * d + s["depth"] * (4 * d * d + mlp) + merger)


def vision_forward_flops(
    flops_per_patch: int, patches_per_token: int, width: int, depth: int, full_layers: int,
    window_patches: int, image_tokens: int,
) -> int:  # fmt: skip
    """Forward FLOPs of the tower over one image of ``image_tokens`` tokens (n = tokens x m^2
    patches): the matmuls (:func:`vision_flops_per_patch` per patch) and the attention scores,
    QK^T and AV at 2 n_w^2 d_v FLOPs each per block over each attention span: the whole image
    in ``full_layers`` blocks, windows of at most ``window_patches`` in the others (0: every
    block full). The window sum takes every window full, n x min(n, W): exact when the image's
    merged grid is a whole number of windows a side, an upper bound otherwise.

    >>> vision_forward_flops(100, 4, 8, 2, 1, 16, 8)  # 32 patches: 3,200 + 4 x 8 x 32 x 48
    52352
    """
    n = image_tokens * patches_per_token
    windowed = depth - full_layers
    span = min(n, window_patches) if window_patches else n
    return n * flops_per_patch + 4 * width * n * (full_layers * n + windowed * span)


def vision_note(s: dict[str, int]) -> str:
    """What the costs leave out of the tower (its FLOPs, per patch, for image tokens)."""
    m2 = s["m"] ** 2
    per_token = m2 * vision_flops_per_patch(s)
    return (
        f"the vision tower's {vision_params(s):,} parameters are counted in the weights; its "
        f"FLOPs ({per_token:,} of forward matmuls per image token of {m2} patches, plus "
        "attention scores) count for --image-tokens"
    )
