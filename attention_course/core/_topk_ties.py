"""Which of several equal scores `torch.topk` keeps on the CPU: its selection algorithm replayed, step by step.

`torch.topk(x, k)` on the CPU pairs each value with its index and runs the C++
standard library on the pairs, comparing values alone (ATen's TopKImpl.h):
`std::nth_element` around place k - 1 (or `std::partial_sort` when 64 k <= n).
Neither is stable, so among values equal to the k-th largest, which indices
are kept depends on how those algorithms move elements. This module replays
GNU libstdc++'s versions of both (the library of Linux builds of torch:
introselect with a median-of-three pivot and Hoare partitions, and a heap
select) on a list of values, so that a NumPy model can keep the very keys
transformers keeps. Nothing here is needed to understand sparse attention:
`core.sparse.top_k_mask` keeps the earlier key on ties unless asked for this.
"""

from __future__ import annotations


def torch_topk_indices(values: list[float], k: int) -> set[int]:
    """The indices torch.topk(values, k) keeps on the CPU (largest first; NaN not handled), as a set."""
    n = len(values)
    items = list(range(n))  # the pairs are (values[i], i); only the value is compared

    def comp(a: int, b: int) -> bool:  # "a goes before b": strictly larger
        return values[a] > values[b]

    if k * 64 <= n:
        _heap_select(items, 0, k, n, comp)  # std::partial_sort: heap select, then a sort of the heap
    else:
        _introselect(items, 0, k - 1, n, 2 * (n.bit_length() - 1), comp)  # std::nth_element
    return set(items[:k])


def _introselect(a: list, first: int, nth: int, last: int, depth: int, comp) -> None:
    while last - first > 3:
        if depth == 0:
            _heap_select(a, first, nth + 1, last, comp)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, comp)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(a, first, last, comp)


def _partition_pivot(a: list, first: int, last: int, comp) -> int:
    mid = first + (last - first) // 2
    _median_to_first(a, first, first + 1, mid, last - 1, comp)
    return _unguarded_partition(a, first + 1, last, first, comp)


def _median_to_first(a: list, result: int, x: int, y: int, z: int, comp) -> None:
    if comp(a[x], a[y]):
        pick = y if comp(a[y], a[z]) else (z if comp(a[x], a[z]) else x)
    elif comp(a[x], a[z]):
        pick = x
    elif comp(a[y], a[z]):
        pick = z
    else:
        pick = y
    a[result], a[pick] = a[pick], a[result]


def _unguarded_partition(a: list, first: int, last: int, pivot: int, comp) -> int:
    while True:
        while comp(a[first], a[pivot]):
            first += 1
        last -= 1
        while comp(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _insertion_sort(a: list, first: int, last: int, comp) -> None:
    if first == last:
        return
    for i in range(first + 1, last):
        value = a[i]
        if comp(value, a[first]):
            a[first + 1:i + 1] = a[first:i]  # move_backward
            a[first] = value
        else:
            j = i
            while comp(value, a[j - 1]):
                a[j] = a[j - 1]
                j -= 1
            a[j] = value


def _heap_select(a: list, first: int, middle: int, last: int, comp) -> None:
    _make_heap(a, first, middle, comp)
    for i in range(middle, last):
        if comp(a[i], a[first]):
            value = a[i]
            a[i] = a[first]  # std::__pop_heap(first, middle, i)
            _adjust_heap(a, first, 0, middle - first, value, comp)


def _make_heap(a: list, first: int, last: int, comp) -> None:
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        _adjust_heap(a, first, parent, length, a[first + parent], comp)
        if parent == 0:
            return
        parent -= 1


def _adjust_heap(a: list, first: int, hole: int, length: int, value, comp) -> None:
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if comp(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2  # std::__push_heap
    while hole > top and comp(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value
