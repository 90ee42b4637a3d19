"""docker-compose.yml's "replicas" profile, its parts run natively. No Docker engine (nor image
registry) is at hand to start the profile, so this starts what it would, from Debian's packages
and the project's own processes, wired by the very files the profile mounts:

- Debian's nginx runs config/nginx-replicas.conf, only the services' addresses rewritten
  (`replica-N:8123` and `listen 8124` to loopback ports);
- two `bench-gateway serve --workers 1` replicas load config/replicas.yaml from BENCH_CONFIG and
  their store and state from BENCH_STORE_URL and BENCH_STATE_URL, as compose sets them (a
  throwaway PostgreSQL and Redis; `sim:8199` becomes the test simulator, allowed_hosts' 8124
  the nginx port); each has a folder of its own, as each container has its own /app/data;
- each service's compose healthcheck runs against its native process, host and port rewritten.

Everything starts once for the module. Every request goes through nginx with the OpenAI SDK, on
a key made as the profile's comment says. Which replica seated a panel: each replica's own
`/healthz` counts the panels its worker seated (`state.panels`; one worker per replica).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from re import Match
from typing import Any

import httpx
import openai
import pytest

from gateway.serve.server import free_port
from tests.helpers.compose import ROOT, SERVICES
from tests.helpers.nginx_server import NginxServer, nginx_binary
from tests.helpers.programs import bench_gateway
from tests.helpers.replicas import Replica

MODEL = "bench/reviewers"


def _rewritten(text: str, pattern: str, new: str | Callable[[Match[str]], str], count: int) -> str:
    """*text* with *pattern* replaced, exactly *count* times (a file that changed fails here)."""
    out, made = re.subn(pattern, new, text)
    assert made == count, (pattern, made)
    return out


def replicas_yaml(sim_url: str, lb_port: int) -> str:
    text = (ROOT / "config" / "replicas.yaml").read_text()
    text = _rewritten(text, re.escape("http://sim:8199"), sim_url, 6)
    return _rewritten(text, r':8124"', f':{lb_port}"', 2)  # allowed_hosts


def nginx_site(replica_ports: list[int], lb_port: int) -> str:
    text = (ROOT / "config" / "nginx-replicas.conf").read_text()

    def by_name(replica: Match[str]) -> str:
        return f"127.0.0.1:{replica_ports[int(replica[1]) - 1]}"

    text = _rewritten(text, r"\breplica-(\d):8123\b", by_name, 2)
    return _rewritten(text, r"\blisten 8124;", f"listen 127.0.0.1:{lb_port};", 1)


@pytest.fixture(scope="module")
def profile(sim_server, pg_server, redis_server, tmp_path_factory) -> Iterator[dict[str, Any]]:
    nginx = nginx_binary()
    sim_server.state.reset()  # no behaviour left by an earlier module
    folder = tmp_path_factory.mktemp("compose")
    if redis_server.proc is None:
        redis_server.start()
    lb_port = free_port()
    env = {
        "BENCH_STORE_URL": pg_server.new_database(),
        "BENCH_STATE_URL": redis_server.new_database(),
    }
    configs = []
    for name in ("replica-1", "replica-2"):  # each its own /app: config beside its data/spill
        path = folder / name / "config" / "replicas.yaml"
        path.parent.mkdir(parents=True)
        path.write_text(replicas_yaml(sim_server.url, lb_port))
        configs.append({**env, "BENCH_CONFIG": str(path)})
    made = subprocess.run(  # `docker compose exec -T replica-1 bench-gateway keys create me`
        [*bench_gateway(), "keys", "create", "me"],
        env={**os.environ, **configs[0]},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    replicas = [Replica(None, folder / f"replica-{n}.log", key, env=configs[n - 1]) for n in (1, 2)]
    lb = NginxServer(nginx, nginx_site([r.port for r in replicas], lb_port), lb_port)
    client = openai.OpenAI(
        base_url=f"http://127.0.0.1:{lb_port}/v1", api_key=key, max_retries=0, timeout=30
    )
    try:
        for replica in replicas:
            replica.launch()
        for replica in replicas:
            replica.wait_ready()
        lb.start()
        yield {
            "client": client,
            "replicas": replicas,
            "lb": lb,
            "pg": pg_server,
            "redis": redis_server,
        }
    finally:
        client.close()
        lb.stop()
        for replica in replicas:
            replica.stop()


def seated(replica: Replica) -> int:
    """The panels this replica's one worker has seated since it started."""
    return int(replica.health()["state"]["panels"])


def ask(profile: dict[str, Any], content: str = "Is this right?") -> Any:
    completion = profile["client"].chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": content}]
    )
    assert completion.choices[0].message.content
    return completion


def test_panels_through_the_load_balancer_are_answered_by_both_replicas(profile):
    replicas = profile["replicas"]
    before = [seated(r) for r in replicas]
    for n in range(6):
        ask(profile, f"review change {n}")
    gained = [seated(r) - b for r, b in zip(replicas, before, strict=True)]
    assert sum(gained) == 6 and min(gained) >= 1, gained


def test_a_stopped_replica_leaves_the_other_answering_and_serves_again_once_started(profile):
    first, second = profile["replicas"]
    first.terminate()  # SIGTERM, as `docker compose restart replica-1` sends
    try:
        before = seated(second)
        for n in range(4):
            ask(profile, f"while one is down {n}")
        assert seated(second) - before == 4
    finally:
        first.launch()
    first.wait_ready()
    deadline = time.monotonic() + 20  # nginx holds a failed replica out for fail_timeout (10 s)
    while seated(first) == 0:
        assert time.monotonic() < deadline, "the restarted replica was sent no panel"
        ask(profile, "and now?")
        time.sleep(0.2)


def test_a_streamed_reply_passes_through_piece_by_piece(profile):
    stream = profile["client"].chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "stream it"}], stream=True
    )
    chunks = list(stream)
    assert len(chunks) >= 3
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] is not None and all(f is None for f in finishes[:-1])


def _healthcheck(service: str, port: int, profile: dict[str, Any]) -> list[str]:
    """The service's compose healthcheck, pointed at the native process: only its host and port
    change (`python` is this interpreter, as it is the image's; pg_isready the server's own)."""
    kind, name, *args = SERVICES[service]["healthcheck"]["test"]
    assert kind == "CMD"
    where = ["-h", "127.0.0.1", "-p", str(port)]  # in the container: the defaults
    if name == "pg_isready":
        return [os.path.join(profile["pg"].bin_dir, name), *args, *where]
    if name == "redis-cli":
        return [name, *where, *args]
    args = [re.sub(r"127\.0\.0\.1:\d+", f"127.0.0.1:{port}", a) for a in args]
    assert f"127.0.0.1:{port}" in " ".join(args), (service, args)
    return [sys.executable if name == "python" else name, *args]


def test_every_services_compose_healthcheck_passes_against_its_native_process(profile, sim_server):
    first, second = profile["replicas"]
    ports = {
        "sim": httpx.URL(sim_server.url).port,
        "postgres": profile["pg"].port,
        "redis": profile["redis"].port,
        "replica-1": first.port,
        "replica-2": second.port,
        "lb": profile["lb"].port,
    }
    assert set(SERVICES) - set(ports) == {"gateway"}  # not in the profile, checked as a replica:
    assert SERVICES["gateway"]["healthcheck"] == SERVICES["replica-1"]["healthcheck"]
    for service, port in ports.items():
        command = _healthcheck(service, port, profile)
        if command[0] == "wget" and shutil.which("wget") is None:
            # No wget on this machine: the same URL, fetched as `wget -q` would (any 2xx).
            assert httpx.get(command[-1], timeout=3).is_success, service
            continue
        done = subprocess.run(command, capture_output=True, text=True, timeout=10)
        assert done.returncode == 0, (service, command, done.stdout, done.stderr)
        if said := {"redis": "PONG", "postgres": "accepting connections"}.get(service):
            assert said in done.stdout, (service, done.stdout)
