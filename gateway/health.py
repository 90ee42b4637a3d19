"""What `/healthz` says beyond "ready": the shared services a replica is working around.

Why one place: the record store and the live state each degrade on their own (PostgreSQL down:
seat rows wait on disk; Redis down: panels run on this worker's local state), and `/healthz`
must name every one that is, so a load balancer or an operator sees it. Each part reports
`degraded(part, why)` when it starts working around a fault and `recovered(part)` when the
service is back; a part logs its fault once, here, not once per request.
"""

from __future__ import annotations

import logging

log = logging.getLogger("bench.health")


class Health:
    def __init__(self) -> None:
        self._faults: dict[str, str] = {}  # part -> why, while it is degraded

    def degraded(self, part: str, why: str) -> None:
        if part not in self._faults:
            log.warning("%s degraded: %s", part, why)
        self._faults[part] = why

    def recovered(self, part: str) -> None:
        if self._faults.pop(part, None) is not None:
            log.warning("%s recovered", part)

    @property
    def faults(self) -> dict[str, str]:
        return dict(self._faults)

    def status(self) -> dict[str, object]:
        """The body of `/healthz` once ready: `ok`, or `degraded` with why for each part."""
        if not self._faults:
            return {"status": "ok"}
        return {"status": "degraded", "degraded": dict(self._faults)}
