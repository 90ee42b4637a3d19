"""docker-compose.yml as shipped, read once: the repository root and its services."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())


SERVICES: dict[str, Any] = COMPOSE["services"]
