// Package deploy holds loopguard's deployment files, not Go code: the
// Prometheus scrape configuration and rules (prometheus/), and the Grafana
// dashboard and provisioning (grafana/) that docker-compose.yml mounts. Its
// tests check that the files parse, that every metric they query is one the
// guard or the worker exports, and, where promtool is installed, that the
// rules load and their unit tests pass.
package deploy
