"""The scan's pool window: output in input order, bounded work in flight, and no worker held idle
behind one long history (watcher.scan.in_order)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from watcher.scan import _MAX_WAITING, in_order


def test_a_long_first_item_does_not_hold_the_later_ones_back() -> None:
    """The first item blocks until the input has yielded 20 items.  Waiting on the oldest item (the
    old window) could pull only 2 x workers items and never get there; the window lets the others
    finish and keeps pulling.  The gate also opens after 30 s so that a regression fails, not hangs."""
    gate, timed_out = threading.Event(), threading.Event()
    pulled = 0
    opened_by_input = False

    def items() -> Iterator[int]:
        nonlocal pulled, opened_by_input
        for i in range(40):
            pulled += 1
            if pulled == 20 and not gate.is_set():
                opened_by_input = True
                gate.set()
            yield i

    def work(i: int) -> int:
        if i == 0 and not gate.wait(30):
            timed_out.set()
        return i * i

    with ThreadPoolExecutor(max_workers=2) as pool:
        def submit(i: int) -> Future[int]:
            return pool.submit(work, i)

        out = list(in_order(submit, items(), 2))
    gate.set()
    assert out == [i * i for i in range(40)]  # input order, every item once
    assert opened_by_input and not timed_out.is_set(), \
        "the input stopped being read while the first item ran: the workers idled"


def test_unfinished_and_held_results_are_bounded() -> None:
    """At most 2 x workers submitted items unfinished, and at most _MAX_WAITING x workers results
    held behind the oldest: while the first item is blocked the input is read up to that bound and
    no further.  The first item is released when the bound is reached and every other item held is
    finished (the window can only wait then); past the bound it is never released but by its 30 s
    timeout, and the test fails."""
    n = 2
    bound = _MAX_WAITING * n
    gate = threading.Event()
    lock = threading.Lock()
    state = {"submitted": 0, "done": 0, "peak_unfinished": 0, "past_bound": 0, "timed_out": 0}

    def work(i: int) -> int:
        if i == 0:
            if not gate.wait(30):
                state["timed_out"] = 1
            return i
        with lock:
            state["done"] += 1
            if state["submitted"] == bound and state["done"] == bound - 1:
                gate.set()
        return i

    with ThreadPoolExecutor(max_workers=n) as pool:
        def submit(i: int) -> Future[int]:
            with lock:
                state["submitted"] += 1
                if not gate.is_set() and state["submitted"] > bound:
                    state["past_bound"] += 1
                unfinished = state["submitted"] - state["done"] - 1  # the first item is never counted done
                state["peak_unfinished"] = max(state["peak_unfinished"], unfinished)
            return pool.submit(work, i)

        out = list(in_order(submit, iter(range(400)), n))
    assert out == list(range(400))
    assert state["past_bound"] == 0, f"{state['past_bound']} items read past the bound while the oldest ran"
    assert not state["timed_out"], "the first item was released by its timeout, not by the bound being reached"
    assert state["peak_unfinished"] <= 2 * n, f"{state['peak_unfinished']} items unfinished at once (bound {2 * n})"
