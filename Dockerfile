# pgbarrier's image: `docker run -e PGBARRIER_PASSWORD=secret -p 4566:4566 IMAGE` serves the
# embedded DuckDB on every interface of the container, data in the /data volume; compose
# files (docker-compose.yml, docker-compose.ha.yml) put it in front of PostgreSQL. README,
# "Container", says what each setting does.

# build: the wheel, with the relay's hot loops compiled by Cython (setup.py)
FROM python:3.11-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY src ./src
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

# run: the wheel and pg_isready (the health check), as an unprivileged user
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-client \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin pgbarrier \
    && mkdir /data && chown pgbarrier:pgbarrier /data
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
COPY docker/entrypoint.sh /usr/local/bin/pgbarrier-entrypoint
USER pgbarrier
WORKDIR /data
VOLUME /data
EXPOSE 4566
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=5 \
    CMD pg_isready -q -h 127.0.0.1 -p "${PGBARRIER_PORT:-4566}" || exit 1
ENTRYPOINT ["pgbarrier-entrypoint"]
CMD ["--host", "0.0.0.0", "--data-dir", "/data"]
