# The gateway's image: the code only. The config is mounted at /app/config (see
# docker-compose.yml), the records live in /app/data (a volume), and it runs as a plain user.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    LITELLM_LOCAL_MODEL_COST_MAP=True LITELLM_OFFLINE_MODE=true HF_HUB_OFFLINE=1

# .dockerignore lets only pyproject.toml, README.md and the Python packages in: no config,
# no tests, no .env.
COPY . /src
RUN pip install --no-cache-dir /src && rm -rf /src

RUN useradd --system --uid 10001 --user-group --create-home bench \
    && mkdir -p /app/config /app/data \
    && chown bench:bench /app/data
WORKDIR /app
USER bench

# The config's `store: sqlite:///../data/records.db` is relative to the config file, so a config
# mounted in /app/config keeps its records in /app/data.
ENV BENCH_CONFIG=/app/config/bench.yaml
EXPOSE 8123 8199
HEALTHCHECK --interval=10s --timeout=3s --retries=5 \
    CMD ["python", "-c", \
         "import urllib.request as u; u.urlopen('http://127.0.0.1:8123/healthz', timeout=2)"]
CMD ["bench-gateway", "serve", "--host", "0.0.0.0", "--port", "8123"]
