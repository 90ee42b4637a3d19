"""What the property tests share: any JSON value (small), and hypothesis's settings for tests
that drive a real gateway (no deadline, no example database, function-scoped fixtures reused)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def against_a_gateway(max_examples: int) -> settings:
    return settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
