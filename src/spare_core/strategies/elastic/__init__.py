"""Elastic (torchft-style) data parallelism: a failed replica group drops out, the others go on
(:mod:`.policy`)."""
from .policy import BATCH_MODES, ENTRY, ElasticDP

__all__ = ["ElasticDP", "BATCH_MODES", "ENTRY"]
