"""Heed's crawler core: profiles, robots, politeness, fetching policy and parsers.

Pure Python, no AWS import. HTTP, storage and the clock sit behind the ports in
``heed_core.ports``; adapters for the real ones live in ``heed_core.adapters`` (HTTP)
and in the ``heed_aws`` layer (DynamoDB, SQS, EventBridge, S3).
"""
__all__ = ["__version__"]
__version__ = "0.1.0"
