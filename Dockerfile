# Builds the loopguard worker (./worker) into a small image.
#
#   docker build -t loopguard-worker .
#   docker run --rm -e TEMPORAL_ADDRESS=host.docker.internal:7233 loopguard-worker
#
# In a container the worker must dial an external Temporal server through
# TEMPORAL_ADDRESS (and optionally TEMPORAL_NAMESPACE): its embedded dev
# server listens on the container's loopback only. docker-compose.yml at the
# repository root runs one.

# The builder's Go must be at least the go directive of worker/go.mod and go.work (1.26.8);
# golang:1.26 tracks the latest 1.26.x release.
FROM golang:1.26 AS build
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

FROM gcr.io/distroless/static-debian12:nonroot
# A writable working directory, for the embedded server's ./loopguard-data if
# the worker is ever run without TEMPORAL_ADDRESS.
WORKDIR /home/nonroot
COPY --from=build /out/loopguard-worker /usr/local/bin/loopguard-worker
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/loopguard-worker"]
