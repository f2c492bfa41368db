import gc

import pytest

from console.gc_pause import cycle_collector_paused


def test_the_collector_is_paused_in_the_block_and_restored_after_it_even_on_an_error():
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with cycle_collector_paused():
            assert not gc.isenabled()
            with cycle_collector_paused():  # nested: the inner block leaves it to the outer one
                assert not gc.isenabled()
            assert not gc.isenabled()
            raise RuntimeError("mid-sweep")
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled():
    gc.disable()
    try:
        with cycle_collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
