"""The section of its chapter that each check, and some of its mistakes, send a student back to.

The class summary names, for each recognised mistake, the chapter *and* the
section to explain again. A check's section is the one that teaches the
function; a mistake whose lesson is elsewhere in the chapter names its own.
Sections are spelled as the chapter's `## ` headings (LaTeX included), so a
test can check that each one exists; `plain` turns one into text.
"""

from __future__ import annotations

import re

CHECK_SECTIONS = {
    "dot_scores": "Step 2: dot products",
    "scale_scores": r"4. Why $\sqrt{d_k}$, and not $d_k$",
    "dot_product_spread": r"1. The spread of $q \cdot k$ grows like $\sqrt{d_k}$",
    "softmax": "3. Subtract the maximum: same weights, no overflow",
    "attention": "The same computation as matrices",
    "causal_mask": "The causal mask",
    "masked_attention": "All four rows at once",
    "padding_mask": "Padding masks",
    "padded_attention": "Causal and padding masks together",
    "multi_head_attention": "2. Multi-head attention, shape by shape",
    "flash_attention": "3. FlashAttention: the same result, one tile at a time",
    "apply_rope": "RoPE: rotate the query and the key",
    "rope_attention": "RoPE: rotate the query and the key",
    "decode_step": "A decode step in numbers",
    "backward_query_tile": "3. The tiled backward pass",
    "worked_example": "Key points",
    "sink_attention": "A sink beside the scores",
    "decode_attention_cost": "One multiply-add per cached number",
    "decode_step_cost": "The intensity of a decoding step",
    # exercises 14 and 15 practise attention that does not score every key, taught beside the local and global
    # layers until a chapter of their own exists
    "sparse_attention": "Sparse selection on the bank-bot example",
    "gated_delta_step": "The delta rule as a memory",
    "gated_delta_chunk": "The delta rule as a memory",
}
"""check name -> the `## ` heading of its exercise's chapter that teaches it."""

_SCALE = "Step 3: scale"
_SOFTMAX = "Step 4: softmax"
_MIX = "Step 5: mix the values"
_MEANING = "What the result means"
_NOTHING = "A row with nothing to attend to"
_NOT_1E9 = r"Why $-\infty$ and not $-10^9$"
_MASKS = {
    "nan_for_empty_row": _NOTHING,
    "mask_filled_with_large_negative": _NOT_1E9,
    "mask_filled_with_zero": _NOT_1E9,
    "mask_added_to_scores": _NOT_1E9,
}

MISTAKE_SECTIONS = {
    "worked_example": {
        "query_key_swapped": "Step 2: dot products",
        "missing_scale": _SCALE, "divided_by_d_k": _SCALE, "scaled_after_softmax": _SCALE,
        "scaled_by_n_k": _SCALE, "scaled_by_n_q": _SCALE, "scaled_by_d_v": _SCALE, "scaled_too_early": _SCALE,
        "softmax_wrong_axis": _SOFTMAX, "normalised_over_everything": _SOFTMAX,
        "does_not_sum_to_1": _SOFTMAX, "no_max_subtraction": _SOFTMAX,
        "returns_weights_as_output": _MIX, "output_from_scores": _MIX,
        # exercise 0, worked by hand: each mistake sends the student back to its step
        "dot_products_reversed": "Step 2: dot products", "added_not_multiplied": "Step 2: dot products",
        "multiplied_by_sqrt_d_k": _SCALE, "too_few_decimals": _SOFTMAX, "exp_rounded_too_early": _SOFTMAX,
        "exp_of_unscaled_scores": _SOFTMAX, "powers_of_10": _SOFTMAX, "sum_of_scores": _SOFTMAX,
        "softmax_of_unscaled_scores": _SOFTMAX, "weights_reversed": _SOFTMAX, "weights_without_exponentials": _SOFTMAX,
        "weights_in_percent": _SOFTMAX,
        "mixed_the_keys": _MIX, "mixed_with_scores": _MIX, "mixed_with_exponentials": _MIX,
        "value_of_largest_only": _MIX,
        # the causal mask is the next chapter's; this one says a masked key's weight is 0 where it mixes the values
        "mask_hides_the_past": _MIX, "mask_hides_itself": _MIX, "positions_from_zero": _MIX, "mask_hides_nothing": _MIX,
        "meaning_most_important_word": _MEANING, "meaning_its_vector_changes": _MEANING,
        "meaning_roles_swapped": _MEANING,
    },
    "scaling": {},
    "stable_softmax": {
        "nan_for_empty_row": r"4. $-\infty$: masked keys and rows with nothing to attend to",
        "no_max_subtraction": "2. The textbook formula, and how it fails",
    },
    "masks": _MASKS,
    "learned_projections": {},
    "cost": {},
    "positions": {},
    "decoding": {
        "top_left_causal_mask": "The newest token needs no mask; a chunk needs the lower-right one",
        "kv_heads_tiled": "Sharing keys and values: multi-query and grouped-query attention",
        "cache_replaced": "The cached step is the full computation",
        "cache_not_updated": "The cached step is the full computation",
        "new_token_not_attended": "The cached step is the full computation",
    },
    "backward": {
        "forgets_d": "1. The gradients",
        "d_added": "1. The gradients",
        "dv_from_ds": "1. The gradients",
        "nan_for_empty_rows": "2. One number per query: the log-sum-exp",
        "unnormalised_p": "2. One number per query: the log-sum-exp",
    },
    "todays_models": {
        "window_off_by_one": "Local and global layers",
        "window_top_left": "Local and global layers",
        "window_ignored": "Local and global layers",
        "future_keys_visible": "Local and global layers",
    },
    "generating_cost": {
        "weights_read_per_request": "One multiply-add per cached number",  # batching: the weights read once
        "cache_shared_by_the_batch": "One multiply-add per cached number",
        "intensity_inverted": "Two ceilings",
    },
}
"""chapter -> mistake id -> the heading that teaches what the mistake missed, where not the check's own."""


def section(chapter: str, check: str, mistake: str = "") -> str:
    """The heading a mistake of `check` (in `chapter`) sends the student back to ("" if none is known)."""
    return MISTAKE_SECTIONS.get(chapter, {}).get(mistake) or CHECK_SECTIONS.get(check, "")


def plain(heading: str) -> str:
    r"""A heading as plain text: `$\sqrt{d_k}$` -> `√d_k`, `$-\infty$` -> `−∞`, `$q \cdot k$` -> `q·k`."""
    def math(m: re.Match) -> str:
        tex = m.group(1)
        tex = re.sub(r"\\sqrt\{([^}]*)\}", "√\\1", tex)
        tex = tex.replace(r"\infty", "∞").replace(r" \cdot ", "·").replace("-", "−")
        return tex.replace("\\", "")

    return re.sub(r"\$([^$]*)\$", math, heading)
