"""Adapters that do I/O for the core: the HTTP transport (``heed_core.adapters.http``)."""
from __future__ import annotations

from heed_core.adapters.http import RequestsTransport, Resolver, system_resolver

__all__ = ["RequestsTransport", "Resolver", "system_resolver"]
