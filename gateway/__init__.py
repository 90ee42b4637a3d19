"""Bench Gateway: the app, the fan-out, the litellm seam, limits, records and the CLI.

Importing the package changes nothing in the process: the environment litellm needs (offline,
no price-map download) is set by the process owner, see gateway/serve/process.py.
"""
