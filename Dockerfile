# Tribunal: `docker build -t tribunal .` (see README, "Operations").
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# A fixed uid/gid, so the volume's owner is the same in every build.
RUN groupadd --system --gid 10001 tribunal \
    && useradd --system --uid 10001 --gid tribunal --home-dir /data --no-create-home \
       --shell /usr/sbin/nologin tribunal

WORKDIR /app
COPY pyproject.toml README.md ./
COPY bot/ bot/
COPY adapters/ adapters/
COPY prompts/ prompts/
COPY storage/ storage/
RUN pip install --no-cache-dir . \
    && mkdir -p /data \
    && chown tribunal:tribunal /data

# The SQLite database (the default) lives on this volume, owned by the
# non-root user, so it survives a new image. /metrics and /healthz listen on
# all addresses inside the container; publishing the port decides who sees it.
VOLUME ["/data"]
ENV TRIBUNAL_DATABASE=/data/tribunal.db \
    TRIBUNAL_METRICS_HOST=0.0.0.0 \
    TRIBUNAL_METRICS_PORT=9100

# Numeric, so a runtime that checks runAsNonRoot can tell it is not root.
USER 10001:10001
WORKDIR /data
# 9100: /metrics and /healthz; 3000: Slack HTTP mode only.
EXPOSE 9100 3000

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ['TRIBUNAL_METRICS_PORT'], timeout=4)"]

ENTRYPOINT ["tribunal"]
CMD ["run"]
