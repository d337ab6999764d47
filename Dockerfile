# Dotfight server image: the wheel is built in a first stage and installed, like any package, in the
# second; the web app and the migrations travel inside it (dotfight/_web, dotfight/_alembic).
FROM python:3.11-slim AS build
WORKDIR /src
COPY . /src
RUN pip install --no-cache-dir build && python -m build --wheel --outdir /dist

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DOTFIGHT_DATABASE_URL=sqlite:////data/dotfight.sqlite3
COPY --from=build /dist/*.whl /tmp/
# libcairo2 draws the page's PNG picture (cairosvg); without it only the SVG is served.
RUN apt-get update && apt-get install -y --no-install-recommends libcairo2 && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir "$(ls /tmp/dotfight-*.whl)[postgres]" \
    && rm /tmp/dotfight-*.whl \
    && useradd --create-home --uid 1000 dotfight \
    && mkdir -p /data \
    && chown dotfight /data

USER dotfight
WORKDIR /home/dotfight
# The SQLite file (and its WAL) lives on this volume and survives new images.
VOLUME ["/data"]
EXPOSE 8000
# Behind a reverse proxy, name its address as a trusted proxy (see docs/SERVER.md) so the
# clients' own addresses are seen; by default no proxy is trusted.
CMD ["dotfight", "serve", "--host", "0.0.0.0", "--port", "8000"]
