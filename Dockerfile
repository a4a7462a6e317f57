# Builds the loopguard worker (./worker) into a small image.
#
#   docker build -t loopguard-worker .
#   docker run --rm -e TEMPORAL_ADDRESS=host.docker.internal:7233 loopguard-worker
#
# In a container the worker must dial an external Temporal server through
# TEMPORAL_ADDRESS (and optionally TEMPORAL_NAMESPACE): its embedded dev
# server listens on the container's loopback only. docker-compose.yml at the
# repository root runs one.

# The builder's Go is the go directive of go.mod, worker/go.mod and go.work
# exactly (1.26.8), pinned by digest (cross-checked in public sources, see
# docs/operations.md) so a rebuild uses the same toolchain. GOTOOLCHAIN=local: never download another.
FROM golang:1.26.8-bookworm@sha256:a688600ca24f8a4d3ca77f95b0dd40704a9fc787c826660eb7ba0b641b8b175d AS build
ENV GOTOOLCHAIN=local
WORKDIR /src

# Dependencies first, so they stay cached while only the code changes.
# The worker is a nested module (it links the Temporal server); the go.work
# at the root joins it to the library module.
COPY go.mod go.sum go.work ./
COPY worker/go.mod worker/go.sum ./worker/
RUN cd worker && go mod download

COPY . .
# The SQLite driver of the embedded server is pure Go: no cgo needed, and the
# binary runs on a static base image.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/loopguard-worker ./worker

FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
# A writable working directory, for the embedded server's ./loopguard-data if
# the worker is ever run without TEMPORAL_ADDRESS.
WORKDIR /home/nonroot
COPY --from=build /out/loopguard-worker /usr/local/bin/loopguard-worker
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/loopguard-worker"]
