"""rope_attention that calls apply_rope without its base: it assumes base 10000."""
CHECK = "rope_attention"
MESSAGE = ('entries differ', 'three tokens from position 0, d = 4, base 100, cut down to the smallest input')
MARKS = "5/7"

from attention_course import apply_rope, scaled_dot_product_attention


def rope_attention(q, k, v, positions, base):
    return scaled_dot_product_attention(apply_rope(q, positions), apply_rope(k, positions), v)
