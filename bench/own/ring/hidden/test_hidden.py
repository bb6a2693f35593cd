from buffers import RingBuffer


def test_full_buffer_drops_the_oldest():
    buffer = RingBuffer(2)
    for item in (1, 2, 3):
        buffer.push(item)
    assert buffer.items() == [2, 3]
