#!/usr/bin/env bash
# E2E_OFFLOAD=1 (issue 24, opt-in, never in CI): Argo Workflows' node-status
# offload for make e2e-scale. A PostgreSQL of Debian's package (install-deps.sh
# adds it), our own instance: data in $STATE/postgres, loopback only on port
# $PG_PORT, run as the package's `postgres` user (PostgreSQL refuses root);
# its pid in $RUN/postgres.pid like every harness process (down.sh stops it).
# Then a role and database for Argo, and the Secret argo/argo-postgres-config
# with their credentials. Prints the workflow-controller-configmap's
# `persistence` value (Argo v3.7/v4 config.PersistConfig: nodeStatusOffLoad,
# postgresql with userNameSecret/passwordSecret), which addons.sh adds; the
# controller runs on the host, so it reaches the database on 127.0.0.1.
#
# Argo offloads a Workflow's nodes only when they do not fit compressed
# (hydrator.Dehydrate; ALWAYS_OFFLOAD_NODE_STATUS=true in
# E2E_WORKFLOW_CONTROLLER_ENV forces it). The deployctl plugin cannot read
# offloaded nodes (pkg/step/plugin): use MODES=pod with it.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
PG_PORT=${E2E_PG_PORT:-15432}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[[ -x $bin/postgres ]] || die "no PostgreSQL server (install-deps.sh with E2E_OFFLOAD=1 installs Debian's postgresql)"
id postgres >/dev/null 2>&1 || die "no postgres user (Debian's postgresql package makes it)"
D=$STATE/postgres
as_pg() { setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; }
if [[ ! -f $D/data/PG_VERSION ]]; then
  rm -rf "$D"; mkdir -p "$D/data" "$D/sock" "$RUN"; chown -R postgres:postgres "$D"; chmod 700 "$D/data"
  as_pg "$bin/initdb" -D "$D/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 >"$RUN/postgres-initdb.log" 2>&1 ||
    die "initdb failed: $RUN/postgres-initdb.log"
fi
# setpriv execs: the recorded pid is the postmaster's.
start postgres setpriv --reuid=postgres --regid=postgres --init-groups -- "$bin/postgres" -D "$D/data" \
  -c listen_addresses=127.0.0.1 -p "$PG_PORT" -c unix_socket_directories="$D/sock" -c fsync=off -c full_page_writes=off
waitfor "as_pg $bin/pg_isready -q -h $D/sock -p $PG_PORT" 30 || die "PostgreSQL did not start: $RUN/postgres.log"
pw_file=$D/argo.password
[[ -s $pw_file ]] || { openssl rand -hex 16 >"$pw_file"; chmod 600 "$pw_file"; }
pw=$(cat "$pw_file")
psql_pg() { as_pg "$bin/psql" -h "$D/sock" -p "$PG_PORT" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }
if [[ $(psql_pg -c "select 1 from pg_roles where rolname = 'argo'") != 1 ]]; then
  psql_pg -c "create role argo login password '$pw'" >/dev/null
fi
if [[ $(psql_pg -c "select 1 from pg_database where datname = 'argo'") != 1 ]]; then
  psql_pg -c "create database argo owner argo" >/dev/null
fi
kubectl -n argo create secret generic argo-postgres-config --from-literal=username=argo --from-file=password="$pw_file" \
  --dry-run=client -o yaml | kubectl apply --server-side --force-conflicts --field-manager=e2e-harness -f - >/dev/null
log "offload: PostgreSQL $(basename "$(dirname "$bin")") on 127.0.0.1:$PG_PORT, database argo, Secret argo/argo-postgres-config"
cat <<YAML
nodeStatusOffLoad: true
postgresql:
  host: 127.0.0.1
  port: $PG_PORT
  database: argo
  tableName: argo_workflows
  userNameSecret: {name: argo-postgres-config, key: username}
  passwordSecret: {name: argo-postgres-config, key: password}
YAML
