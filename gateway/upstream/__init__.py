"""The one way out to the model providers: litellm, behind one seam.

- `calls`: the seam itself, the only module that imports litellm; one call to one model.
- `gate`: one call's set-up at a time, in arrival order, until its request has left.
- `inline`: the event loop's executor that runs litellm's CPU-only set-up on the loop.
"""

from gateway.upstream.calls import Answer, Upstream, call_model, classify

__all__ = ["Answer", "Upstream", "call_model", "classify"]
