#!/bin/sh
# Creates (once) and upgrades the Temporal and visibility databases with the
# schema shipped in the admin-tools image, which matches the server's
# version. Safe to run on every start: an existing database is kept, and
# update-schema only applies versions the database lacks.
set -eu
: "${POSTGRES_SEEDS:?}" "${POSTGRES_USER:?}" "${SQL_PASSWORD:?}"
port=${DB_PORT:-5432}
schema=/etc/temporal/schema/postgresql/v12

i=0
until nc -z -w 5 "$POSTGRES_SEEDS" "$port"; do
	i=$((i + 1))
	[ "$i" -lt 60 ] || { echo "postgres at $POSTGRES_SEEDS:$port did not open" >&2; exit 1; }
	sleep 2
done

sql() { temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$port" -u "$POSTGRES_USER" "$@"; }
for db in temporal:temporal temporal_visibility:visibility; do
	name=${db%%:*}
	dir=${db#*:}
	sql --db "$name" create || echo "database $name exists"
	sql --db "$name" setup-schema -v 0.0
	sql --db "$name" update-schema -d "$schema/$dir/versioned"
done
echo "schema ready"
