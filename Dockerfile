# The gateway's single executable on a distroless base (glibc and libstdc++, no shell).
#   docker build -t token-gateway .
#   docker run --stop-timeout 40 -p 8080:8080 -v gateway-data:/var/lib/gateway \
#     -v "$PWD/gateway.yaml:/etc/gateway/gateway.yaml:ro" token-gateway
# docs/deploy/README.md has the paths and variables; test/deploy/manifests.test.ts checks them.

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# The install CI runs (.ci/run); it brings the pinned Node that becomes the executable.
RUN npm ci
COPY . .
RUN npm run build
# The data folder, made here because the final stage has no shell to make it.
RUN mkdir /data

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/dist/gateway /usr/local/bin/gateway
# A default that serves as is; mount your own file over it. Its orders API is the OpenAPI
# document it names, relative to the config's folder.
COPY --from=build /src/gateway.example.yaml /etc/gateway/gateway.yaml
COPY --from=build /src/examples/orders.openapi.yaml /etc/gateway/examples/orders.openapi.yaml
COPY --from=build --chown=65532:65532 /data /var/lib/gateway
# The portal stays on the container's loopback unless the config or -e PORTAL_HOST=0.0.0.0 says
# otherwise: the example's portal lets anyone sign up.
ENV GATEWAY_DB=/var/lib/gateway/gateway.db
VOLUME /var/lib/gateway
# The example's GATEWAY_PORT and PORTAL_PORT.
EXPOSE 8080 8081
# Numeric, so that Kubernetes' runAsNonRoot can check it (it cannot resolve "nonroot").
USER 65532:65532
# No curl in the image: the subcommand asks the main listener, the one clients use, for the
# metadata document (served with oauth.issuer); it works with the admin listener off too.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s \
  CMD ["/usr/local/bin/gateway", "healthcheck", "--config", "/etc/gateway/gateway.yaml"]
# The gateway is PID 1 and drains on docker stop's SIGTERM (Docker's default stop signal) for up to
# the config's shutdownTimeout, 30 s by default; docker stop kills after 10 s unless given
# --stop-timeout (or -t) above it.
ENTRYPOINT ["/usr/local/bin/gateway"]
CMD ["--config", "/etc/gateway/gateway.yaml"]
