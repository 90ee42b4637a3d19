FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY gateway ./gateway
COPY routing ./routing
COPY simulator ./simulator
COPY config ./config
RUN pip install --no-cache-dir .
ENV LITELLM_LOCAL_MODEL_COST_MAP=True LITELLM_OFFLINE_MODE=true HF_HUB_OFFLINE=1
EXPOSE 8123 8199
CMD ["bench-gateway", "serve", "--config", "config/docker.yaml", "--host", "0.0.0.0"]
