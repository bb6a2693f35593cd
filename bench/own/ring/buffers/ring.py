"""A fixed-size buffer that keeps the most recent items."""


class RingBuffer:
    def __init__(self, size: int):
        if size < 1:
            raise ValueError("size must be at least 1")
        self.size = size
        self._items: list = []

    def push(self, item) -> None:
        """Add an item; when full, the oldest item makes room."""
        if len(self._items) == self.size:
            self._items.pop()
        self._items.append(item)

    def items(self) -> list:
        """The items, oldest first."""
        return list(self._items)

    def __len__(self) -> int:
        return len(self._items)
