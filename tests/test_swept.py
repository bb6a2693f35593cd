"""How far a definition's one-change candidates were made (omni/repair/swept.py), with the real candidate maker
(omni/repair/mutants.py) on a real definition: a sweep stopped at its budget and resumed makes each candidate once,
in order, and says when none is left."""

from functools import partial

from omni.repair.mutants import mutants
from omni.repair.swept import Sweeps

SOURCE = '''def window(items, low, high, inclusive=(True, True)):
    start = 0
    while start < len(items) and (items[start] < low or not inclusive[0] and items[start] == low):
        start += 1
    stop = len(items)
    while stop > start and (items[stop - 1] > high or not inclusive[1] and items[stop - 1] == high):
        stop -= 1
    return items[start:stop]
'''


def test_a_sweep_stopped_at_its_budget_resumes_where_it_stopped_until_none_is_left():
    made = partial(mutants, SOURCE)
    every = made(1000)
    assert len(every) > 12, len(every)  # enough for three slices
    place = ("pkg/win.py", "window")
    sweeps = Sweeps()
    assert not sweeps.begun(place) and not sweeps.unfinished(place)
    sweeps.begin(place)
    first = sweeps.next(made, place, 5)
    assert first == every[:5] and sweeps.begun(place) and sweeps.unfinished(place)
    assert sweeps.next(made, place, 3) == [] and sweeps.made_to[place] == 5  # a budget below what was made: none
    sweeps.begin(place)  # resumed
    second = sweeps.next(made, place, 12)
    assert second == every[5:12] and not sweeps.unfinished(place)  # candidates left, but two sweeps is the most
    assert sweeps.more[place]
    rest = sweeps.next(made, place, 1000)
    assert rest == every[12:] and not sweeps.more[place]
    assert first + second + rest == every  # each once, in order
    assert not Sweeps().unfinished(("pkg/win.py", "other"))
