from minicfg.reader import read_config

__all__ = ["read_config"]
