from rowsplit.split import split_row

__all__ = ["split_row"]
