#!/bin/sh
# Waits for the server, creates the namespace (once) and registers the
# guard's Keyword search attribute (once). Safe to run again.
set -eu
ns=${TEMPORAL_NAMESPACE:-default}
attr=${LOOPGUARD_SEARCH_ATTRIBUTE:-LoopGuardState}

i=0
until temporal operator cluster health >/dev/null 2>&1; do
	i=$((i + 1))
	[ "$i" -lt 60 ] || { echo "the Temporal server at $TEMPORAL_ADDRESS is not healthy" >&2; exit 1; }
	sleep 2
done

if ! temporal operator namespace describe --namespace "$ns" >/dev/null 2>&1; then
	temporal operator namespace create --namespace "$ns" --retention "${NAMESPACE_RETENTION:-72h}"
fi

i=0
until temporal operator search-attribute list --namespace "$ns" | grep -qw "$attr"; do
	i=$((i + 1))
	[ "$i" -lt 30 ] || { echo "could not register search attribute $attr" >&2; exit 1; }
	temporal operator search-attribute create --namespace "$ns" --name "$attr" --type Keyword || true
	sleep 2
done
echo "namespace $ns ready, search attribute $attr registered"
