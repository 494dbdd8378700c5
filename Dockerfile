# covenant's image, built from source: a fully static binary in an empty image with a
# non-root user. Any CI with Docker builds it:
#
#   docker build -t covenant:0.1.0 .
#
# The runtime stage is deploy/image/Dockerfile's, line for line (a test holds them together);
# `make image` builds that one from a binary cargo built on the host, which is how covenant's
# own CI builds and smoke-tests the image (no registry is reachable there).
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN RUSTFLAGS="-C target-feature=+crt-static" \
    cargo build --profile dist --locked --target x86_64-unknown-linux-gnu --bin covenant \
 && cp target/x86_64-unknown-linux-gnu/dist/covenant /covenant \
 && mkdir -p /scratch/tmp

FROM scratch
COPY deploy/image/rootfs/ /
COPY --from=build /covenant /usr/local/bin/covenant
# The kube client's TLS stack loads the system roots beside the cluster's own CA.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# A /tmp the non-root user can write (`serve --dev` writes its certificates there;
# `serve` as deployed writes nothing and runs on a read-only root).
COPY --chown=65532:65532 --from=build /scratch/ /
USER 65532:65532
EXPOSE 8443 8080
# The subcommand comes from the Deployment's args (`serve …`), so `docker run IMAGE check -`
# runs the offline checker from the same image.
ENTRYPOINT ["/usr/local/bin/covenant"]
