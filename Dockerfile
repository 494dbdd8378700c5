# covenant: a static, non-root image. Two stages: build with the Rust toolchain against musl,
# then copy the one binary into an empty image with CA certificates (for the cluster's API
# server) and a non-root user. The deploy/ base runs it read-only as UID 65532.
#
#   docker build -t covenant:0.1.0 .
#
# This Dockerfile was written and reviewed but not built where covenant is developed (no
# container runtime there); `cargo build --release --target x86_64-unknown-linux-musl` is the
# step it runs.
FROM rust:1.85-bookworm AS build
RUN rustup target add x86_64-unknown-linux-musl && apt-get update && apt-get install -y --no-install-recommends musl-tools && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src src
COPY registry registry
COPY tests/fixtures/admission/kube-rs tests/fixtures/admission/kube-rs
COPY benches benches
COPY examples examples
RUN cargo build --release --locked --target x86_64-unknown-linux-musl --bin covenant \
 && cp target/x86_64-unknown-linux-musl/release/covenant /covenant

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /covenant /usr/local/bin/covenant
USER 65532:65532
EXPOSE 8443 8080
ENTRYPOINT ["/usr/local/bin/covenant", "serve"]
