"""litellm's reader: calls sent and read by litellm, one of the seam's two readers.

- `reader`: `LitellmReader`, a seat's call and a route turn's opened through `acompletion`,
  on one shared session, set-ups queued in arrival order; litellm's exceptions raised as they
  are (the seam maps them, gateway/upstream/failures.py).
- `stream`: litellm's chunk stream handed on as the gateway's typed `Chunk`s.
- `inline`: the event loop's executor that runs litellm's CPU-only set-up on the loop.
"""
