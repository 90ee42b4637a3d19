"""docs/guide.md cannot rot: each of its titled blocks (```sh title="..."```) runs here as a user
would paste it, in a folder laid out as the guide assumes (`config/`, `data/`), against the
demo where the guide's commands read or copy its records.

The liberties: the demo's address, port and records path, and where a block names a server the
test cannot have (PostgreSQL's password, nginx's certificate and host), the test's own.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from gateway.serve.server import free_port
from tests.helpers.demo import Demo, running_demo, shell_env
from tests.helpers.nginx_server import NginxServer, nginx_binary
from tests.helpers.programs import end, wait_ready

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"
BLOCK = re.compile(r'^```(\w+) title="([^"]+)"\n(.*?)^```$', re.M | re.S)
BLOCKS = {title: code for _, title, code in BLOCK.findall(GUIDE.read_text())}
KEYS = ("OPENROUTER_API_KEY", "GROQ_API_KEY", "NVIDIA_NIM_API_KEY", "MISTRAL_API_KEY")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Iterator[Demo]:
    with running_demo(tmp_path_factory.mktemp("demo")) as served:
        yield served


def records_of(demo: Demo) -> Path:
    line = next(line for line in demo.printed if line.startswith("Records: "))
    return Path(line.removeprefix("Records: ").split(" (")[0])


def sh(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code],
        capture_output=True, text=True, timeout=180, cwd=cwd,
        env=shell_env(cwd / "bin", **env),
    )  # fmt: skip
    return done


def a_folder(tmp_path: Path, demo: Demo | None = None) -> Path:
    """Where a user runs the guide's commands: `config/` holding the guide's providers.yaml,
    and `data/`, the demo's records when there is a demo."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "providers.yaml").write_text(BLOCKS["providers.yaml"])
    if demo is not None:
        (tmp_path / "data").symlink_to(records_of(demo).parent)
    return tmp_path


def test_every_block_is_run_here():
    ran = {
        "providers.yaml",
        "keys",
        "check",
        "serve",
        "backup",
        "backup-python",
        "restore",
        "store-copy",
        "behind-a-proxy",
        "nginx",
        "refused",
        "provider failures",
    }  # fmt: skip (the last: test_guide_failures.py)
    assert set(BLOCKS) == ran, "a titled block of docs/guide.md no test here runs"


def test_the_keys_line_exports_every_key_in_dot_env(tmp_path):
    (tmp_path / ".env").write_text("GROQ_API_KEY=gsk-test\n# MISTRAL_API_KEY=\n")
    done = sh(
        BLOCKS["keys"] + "python3 -c \"import os; print(os.environ['GROQ_API_KEY'])\"", tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "gsk-test"


def test_the_providers_config_is_valid_and_names_each_model_whose_key_is_unset(tmp_path):
    folder = a_folder(tmp_path)
    keys = {name: "test-key" for name in KEYS if name != "MISTRAL_API_KEY"}
    done = sh(BLOCKS["check"], folder, **keys)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("config config/providers.yaml is valid\n")
    models = [line.split()[0] for line in done.stdout.splitlines() if line.startswith("  ") and
              "connection=" in line]  # fmt: skip
    assert models == [e["model_name"] for e in yaml.safe_load(BLOCKS["providers.yaml"])
                      ["model_list"]]  # fmt: skip
    assert done.stderr == (
        "warning: model codestral: MISTRAL_API_KEY is not set; it is benched until it is\n"
    )


def test_serve_takes_the_providers_config_and_offers_its_collections(tmp_path):
    folder = a_folder(tmp_path)
    port = free_port()
    command = BLOCKS["serve"].strip().replace("--port 8123", f"--port {port} --workers 1")
    log = tmp_path / "serve.log"
    env = shell_env(tmp_path / "bin", **{name: "test-key" for name in KEYS})
    with log.open("w") as out:
        proc = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=folder, env=env,
                                stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"

        def ready() -> bool:
            try:
                return httpx.get(f"{url}/healthz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_ready(proc, ready, "serve", log.read_text, 120)
        listed = {m["id"] for m in httpx.get(f"{url}/v1/models").json()["data"]}
        assert {"bench/reviewers", "bench/design"} <= listed
        assert (folder / "data" / "records.db").exists()  # store: sqlite:///../data/records.db
    finally:
        end(proc)


def test_a_backup_of_the_live_store_is_whole_and_holds_the_demos_panels(tmp_path, demo):
    folder = a_folder(tmp_path, demo)
    done = sh(BLOCKS["backup"], folder)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    with sqlite3.connect(folder / "data" / "records-backup.db") as copy:
        assert copy.execute("SELECT count(*) FROM panels").fetchone()[0] >= 1


def test_the_python_backup_copies_the_live_store(tmp_path, demo):
    folder = a_folder(tmp_path, demo)
    done = subprocess.run([sys.executable, "-c", BLOCKS["backup-python"]], cwd=folder,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    count = int(done.stdout.split()[0])
    assert count >= 1 and done.stdout.strip().endswith("panels backed up")


def test_a_restore_puts_the_backup_in_place_without_the_old_wal(tmp_path, demo):
    (tmp_path / "served").mkdir()
    served = a_folder(tmp_path / "served", demo)
    assert sh(BLOCKS["backup"], served).returncode == 0
    folder = tmp_path / "restored"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "records-backup.db").write_bytes(
        (served / "data" / "records-backup.db").read_bytes()
    )
    (folder / "data" / "records.db").write_bytes(b"an older store")
    for stale in ("records.db-wal", "records.db-shm"):
        (folder / "data" / stale).write_bytes(b"the older store's")
    done = sh(BLOCKS["restore"], folder)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (folder / "data").iterdir()) == [
        "records-backup.db", "records.db"]  # fmt: skip
    with sqlite3.connect(folder / "data" / "records.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT count(*) FROM panels").fetchone()[0] >= 1


def test_store_copy_moves_the_demos_records_into_postgresql(tmp_path, demo, pg_url):
    folder = a_folder(tmp_path, demo)
    command = BLOCKS["store-copy"].replace("postgresql://bench:secret@localhost:5432/bench", pg_url)
    done = sh(command, folder)
    assert done.returncode == 0, done.stderr
    import psycopg

    with psycopg.connect(pg_url) as db:
        cur = db.execute("SELECT count(*) FROM panels")
        row = cur.fetchone()
        assert row is not None and row[0] >= 1


def test_behind_nginx_with_tls_the_gateway_answers_its_public_host_with_a_key(tmp_path, sim):
    from tests.helpers.bench import bench_raw
    from tests.helpers.served import served_gateway

    binary = nginx_binary()
    certs = tmp_path / "ssl"
    certs.mkdir()
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=bench.example.org", "-addext", "subjectAltName=DNS:bench.example.org",
         "-keyout", str(certs / "privkey.pem"), "-out", str(certs / "fullchain.pem")],
        check=True, capture_output=True,
    )  # fmt: skip
    os.chmod(certs, 0o755)
    for pem in certs.iterdir():
        pem.chmod(0o644)  # nginx's workers run as nobody
    raw = bench_raw(sim.url)
    raw["gateway"].update(yaml.safe_load(BLOCKS["behind-a-proxy"])["gateway"])
    with served_gateway(raw, tmp_path) as gateway:
        config = tmp_path / "served.yaml"
        made = subprocess.run(
            [sys.executable, "-m", "gateway.cli", "keys", "create", "me", "--config", str(config)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
        key = made.stdout.strip().splitlines()[-1]
        port = free_port()
        site = (
            BLOCKS["nginx"]
            .replace("listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;")
            .replace("/etc/ssl/bench", str(certs))
            .replace("http://127.0.0.1:8123", gateway.url)
        )
        nginx = NginxServer(binary, site, port).start()
        try:
            ask = ["curl", "-sS", "--resolve", f"bench.example.org:{port}:127.0.0.1",
                   "--cacert", str(certs / "fullchain.pem"),
                   f"https://bench.example.org:{port}/v1/models"]  # fmt: skip
            keyless = subprocess.run(ask + ["-o", "/dev/null", "-w", "%{http_code}"],
                                     capture_output=True, text=True, timeout=60)  # fmt: skip
            assert keyless.stdout == "401", keyless.stderr
            keyed = subprocess.run(ask + ["-H", f"Authorization: Bearer {key}"],
                                   capture_output=True, text=True, timeout=60)  # fmt: skip
            assert keyed.returncode == 0, keyed.stderr
            assert "bench/trio" in keyed.stdout, keyed.stdout
        finally:
            nginx.stop()


# The guide's config with one slip each, as `refused` shows them, in its order.
SLIPS = [
    lambda t: t.replace(
        "api_key: os.environ/GROQ_API_KEY}\n    bench: {connection: groq, role: general",
        "api_key: $GROQ_API_KEY}\n    bench: {connection: groq, role: general",
    ),
    lambda t: t.replace(
        "    litellm_params: {model: mistral/codestral-latest, "
        "api_key: os.environ/MISTRAL_API_KEY}\n",
        "    litellm_params:\n    model: mistral/codestral-latest\n"
        "    api_key: os.environ/MISTRAL_API_KEY\n",
    ),
    lambda t: t.replace("    members: [llama-70b, groq-llama]\n", "").replace(
        "    shape: design\n", "    shape: design\n  members: [llama-70b, groq-llama]\n"
    ),
    lambda t: t.replace(
        "gateway:\n", "  reviewers:\n    members: [groq-8b, codestral]\ngateway:\n", 1
    ),
]


@pytest.mark.parametrize("slip", range(len(SLIPS)))
def test_each_refusal_the_guide_shows_is_what_check_config_says(tmp_path, slip):
    written = SLIPS[slip](BLOCKS["providers.yaml"])
    assert written != BLOCKS["providers.yaml"]
    folder = a_folder(tmp_path)
    (folder / "config" / "providers.yaml").write_text(written)
    done = sh(BLOCKS["check"], folder, **{name: "test-key" for name in KEYS})
    assert done.returncode == 1
    shown = BLOCKS["refused"].splitlines()[slip]
    assert done.stderr.splitlines()[1:] == [shown], done.stderr
