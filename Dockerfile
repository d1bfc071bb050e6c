# The `optics` binary for the distributed deployment (compose/compose.yaml): the `service`
# profile with the Kafka bus (the default `kafka` feature; librdkafka is built from source with
# gcc, make and perl, no TLS or SASL), in a slim runtime image, run as a user without
# privileges.
#
#   docker build -t optics .
#
# The x86-64 build targets x86-64-v3 (.cargo/config.toml); for an older CPU pass
#   --build-arg RUSTFLAGS="-C target-cpu=x86-64"

FROM rust:1.95-bookworm AS build
ARG RUSTFLAGS=
ENV RUSTFLAGS=${RUSTFLAGS}
WORKDIR /src
COPY . .
# The registry and target directories are cache mounts: a rebuild after a code change compiles
# the workspace, not the dependencies again.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --locked --profile service --bin optics \
    && cp target/service/optics /usr/local/bin/optics

FROM debian:bookworm-slim
# curl for the health checks; ca-certificates for an https object store.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/optics --create-home optics
COPY --from=build /usr/local/bin/optics /usr/local/bin/optics
USER optics
WORKDIR /var/lib/optics
ENV OPTICS_DATA_DIR=/var/lib/optics
ENTRYPOINT ["/usr/local/bin/optics"]
CMD ["--help"]
