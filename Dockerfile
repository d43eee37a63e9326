# Ovation's container image: a release build in a Rust image, run as a non-root user in
# a slim Debian, its SQLite database (when it uses one) in the volume /data.
#
#   docker build -t ovation .
#   docker run -p 8080:8080 -e OVATION_REDIS_URL=redis://redis:6379 -v ovation:/data ovation
#
# BUILD_IMAGE and RUNTIME_IMAGE name the two bases. A build image that already holds
# the binary at /out/ovation skips the compile (CI builds this file from bases it makes
# itself, with the binary it built).
ARG BUILD_IMAGE=docker.io/library/rust:1.94-bookworm
ARG RUNTIME_IMAGE=docker.io/library/debian:bookworm-slim

FROM ${BUILD_IMAGE} AS build
WORKDIR /src
COPY . .
RUN if [ ! -x /out/ovation ]; then \
      cargo build --release --locked --bin ovation \
      && mkdir -p /out && cp target/release/ovation /out/ovation; \
    fi

FROM ${RUNTIME_IMAGE}
RUN if ! command -v curl >/dev/null; then \
      apt-get update && apt-get install -y --no-install-recommends ca-certificates curl \
      && rm -rf /var/lib/apt/lists/*; \
    fi \
    && useradd --system --uid 10001 --user-group --home-dir /data --no-create-home \
       --shell /usr/sbin/nologin ovation \
    && mkdir -p /data && chown ovation:ovation /data
COPY --from=build /out/ovation /usr/bin/ovation
USER ovation
WORKDIR /data
VOLUME /data
ENV OVATION_BIND=0.0.0.0:8080 \
    OVATION_DATABASE_URL=sqlite:///data/ovation.db?mode=rwc \
    OVATION_CONFIG=/dev/null
EXPOSE 8080
# Ready, not just up: Redis and SQL answer (the HEALTHCHECK needs the image built in
# the docker format: `buildah bud --format docker`).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8080/readyz >/dev/null || exit 1
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/ovation"]
CMD ["serve"]
