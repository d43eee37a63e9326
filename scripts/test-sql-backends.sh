#!/usr/bin/env bash
# Runs the SQL-layer tests (admin, archive, cross-instance, limits, durability, leagues,
# ledger, the drain killed mid-way, board webhooks, adjustments and signed-in voters
# modules) against this machine's PostgreSQL and MariaDB, starting them when they are
# down. Fails loudly when either cannot be reached: a skipped backend would be a silent
# pass. Each test creates its own ovation_it_* database; they are dropped at the end.
set -euo pipefail

PG_URL="${OVATION_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}"
MY_URL="${OVATION_TEST_MARIADB_URL:-mysql://root@127.0.0.1:3306/test}"

pg_up() { psql "$PG_URL" -Atqc 'select 1' >/dev/null 2>&1; }
my_up() { mariadb -h 127.0.0.1 -P 3306 -u root -e 'select 1' >/dev/null 2>&1; }

wait_for() {
  local check=$1 name=$2
  for _ in $(seq 100); do "$check" && return 0; sleep 0.2; done
  echo "error: $name cannot be reached; the SQL-layer tests need it" >&2
  exit 1
}

if ! pg_up; then
  echo "starting PostgreSQL" >&2
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start || true
fi
wait_for pg_up PostgreSQL
if ! my_up; then
  echo "starting MariaDB" >&2
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || true
fi
wait_for my_up MariaDB

cleanup() {
  for db in $(psql "$PG_URL" -Atqc "select datname from pg_database where datname like 'ovation_it_%'" 2>/dev/null); do
    psql "$PG_URL" -qc "drop database if exists $db" >/dev/null 2>&1 || true
  done
  for db in $(mariadb -h 127.0.0.1 -u root -N -e "show databases like 'ovation\\_it\\_%'" 2>/dev/null); do
    mariadb -h 127.0.0.1 -u root -e "drop database if exists \`$db\`" || true
  done
}
trap cleanup EXIT

echo "== SQL-layer tests on PostgreSQL" >&2
OVATION_TEST_DATABASE_URL="$PG_URL" cargo test --test it -- admin:: archive:: sync:: limits:: durability:: leagues:: league_play:: ledger:: drain_crash:: board_webhooks:: adjustments:: voters::
echo "== SQL-layer tests on MariaDB" >&2
OVATION_TEST_DATABASE_URL="$MY_URL" cargo test --test it -- admin:: archive:: sync:: limits:: durability:: leagues:: league_play:: ledger:: drain_crash:: board_webhooks:: adjustments:: voters::
