import pytest

from buffers import RingBuffer


def test_keeps_items_in_order():
    buffer = RingBuffer(3)
    buffer.push(1)
    buffer.push(2)
    assert buffer.items() == [1, 2] and len(buffer) == 2


def test_size_must_be_positive():
    with pytest.raises(ValueError):
        RingBuffer(0)
