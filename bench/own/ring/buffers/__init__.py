from buffers.ring import RingBuffer

__all__ = ["RingBuffer"]
