"""The simulated OpenAI-compatible upstream: a tool beside the gateway, not part of it.

It imports nothing from `gateway` (a test proves it), so it can run, and be reasoned about, on
its own: `bench-gateway simulate`, the offline demo, the tests and the benchmarks all point
litellm's `openai/<name>` models at it.
"""

from simulator.server import create_sim_app, serve_simulator
from simulator.state import BEHAVIOUR_KEYS, SimState, load_spec, validate_behaviour

__all__ = [
    "BEHAVIOUR_KEYS",
    "SimState",
    "create_sim_app",
    "load_spec",
    "serve_simulator",
    "validate_behaviour",
]
