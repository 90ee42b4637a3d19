"""Bench Gateway: the app, the fan-out, the litellm seam, limits, records and the CLI."""

import os

# Before anything can import litellm: no price-map download, no model-hub lookups, offline.
# (litellm otherwise spends seconds at import trying the network, and some token counters
# block on a model hub.)
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# litellm caps its aiohttp pool at 500 connections per host by default: with many models on one
# provider host that silently queues seats in waves. (0 does not mean unlimited: litellm then
# passes no limit and aiohttp applies its own 100.) The panel size already bounds our calls.
os.environ.setdefault("AIOHTTP_CONNECTOR_LIMIT", "100000")
os.environ.setdefault("AIOHTTP_CONNECTOR_LIMIT_PER_HOST", "100000")
