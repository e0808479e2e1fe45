"""Two recognised mistakes that predict the same result on an input: the check names neither from that input alone.

For every pair of mistakes of the tiled backward pass (exercise 11) and of the decoding step's cost (exercise 13),
found from the registry, not listed by hand: where their predictions agree on an input, another input tells them
apart; and a function that makes one of them (its prediction, called as the student's function) is named as that
mistake, on an input where the other does not explain it.
"""

import itertools

import numpy as np
import pytest

from attention_course.grading.checks.engine.check import prediction_matches
from attention_course.grading.checks.engine.mistakes import as_plain, same_values
from attention_course.grading.checks.engine.run import check_in_process
from attention_course.grading.checks.exercises import EXERCISES

WEIGHED = ("11_attention_backward", "13_decode_step_cost")
CHECKS = [check for exercise in EXERCISES if exercise.id in WEIGHED for check in exercise.checks]


def _equal(check, i, a, b) -> bool:
    """Do two results agree on input i, by the check's own comparison?"""
    if a is None or b is None:
        return False
    if check.compare is not None:
        return check.compare(check.cases[i], as_plain(a), as_plain(b), {}) is None
    return same_values(as_plain(a), as_plain(b), check.cases[i].tolerance)


def _made(check, j, position):
    """What a function with mistake number `position` returns on input j: its prediction, or, where the mistake
    does not apply (no prediction), the right result."""
    predicted = check.predictions(j).get(position)
    return check.expected(j) if predicted is None else predicted


def _agreeing_pairs(check):
    """(i, position a, position b) where two mistakes of different ids predict the same wrong result on input i."""
    found = []
    for i in range(len(check.cases)):
        predictions, expected = check.predictions(i), check.expected(i)
        for a, b in itertools.combinations(range(len(check.mistakes)), 2):
            if check.mistakes[a].id == check.mistakes[b].id:
                continue
            pa, pb = predictions.get(a), predictions.get(b)
            if _equal(check, i, pa, pb) and not _equal(check, i, pa, expected):
                found.append((i, a, b))
    return found


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_pair_of_mistakes_that_agree_on_an_input_is_told_apart_by_another(check):
    unseparated = []
    for i, a, b in _agreeing_pairs(check):
        separated = any(not _equal(check, j, _made(check, j, a), _made(check, j, b)) for j in range(len(check.cases)))
        if not separated:
            unseparated.append((check.cases[i].label, check.mistakes[a].id, check.mistakes[b].id))
    assert not unseparated, unseparated


def _making(check, position):
    """A function that makes mistake number `position`: its prediction, the right result where it has none."""
    mistake = check.mistakes[position]

    def made(*args, **kwargs):
        predicted = mistake.predict(*args, **kwargs)
        return check.reference(*args, **kwargs) if predicted is None else predicted
    return made


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_a_function_that_makes_one_mistake_is_named_by_it_where_no_other_explains_it(check):
    wrong = []
    for position, mistake in enumerate(check.mistakes):
        if mistake.predict is None:
            continue
        result = check_in_process(check, _making(check, position), hidden=True)
        if result.passed:
            continue  # a mistake these inputs cannot show (its own test says where it shows)
        shown = result.smallest or result.first_failure
        others = {check.mistakes[p].id for p in range(len(check.mistakes))
                  if check.mistakes[p].id != mistake.id and p != position}
        if result.mistake in others and shown.ambiguous is False:
            # named another mistake on an input where only it explains the result: is it really the same numbers?
            same_everywhere = any(all(_equal(check, i, _made(check, i, position), _made(check, i, p))
                                      for i in check.indices(True))
                                  for p in range(len(check.mistakes)) if check.mistakes[p].id == result.mistake)
            if not same_everywhere:
                wrong.append((mistake.id, result.mistake, shown.label))
    assert not wrong, wrong
