"""rope_attention that forgets the rotation: plain attention, blind to the order of the tokens."""
CHECK = "rope_attention"
MISTAKE = "not_rotated"
MARKS = "3/15"

from attention_course import scaled_dot_product_attention


def apply_rope(x, positions, base=10000.0):
    raise NotImplementedError()


def rope_attention(q, k, v, positions, base=10000.0):
    return scaled_dot_product_attention(q, k, v)
