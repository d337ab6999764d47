# Dotfight server image. The server finds web/ and alembic/ next to the package, so the repository is
# installed in place (editable) rather than copied into site-packages.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DOTFIGHT_DATABASE_URL=sqlite:////data/dotfight.sqlite3

WORKDIR /app
COPY . /app
RUN pip install --no-cache-dir -e . \
    && useradd --create-home --uid 1000 dotfight \
    && mkdir -p /data \
    && chown dotfight /data

USER dotfight
# The SQLite file (and its WAL) lives on this volume and survives new images.
VOLUME ["/data"]
EXPOSE 8000
# Behind a reverse proxy, set FORWARDED_ALLOW_IPS to its address so client addresses are seen.
CMD ["dotfight", "serve", "--host", "0.0.0.0", "--port", "8000"]
