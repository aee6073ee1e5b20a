#!/usr/bin/env bash
# Makes sure the database servers the tests talk to are up: MariaDB on
# 127.0.0.1:3306 (root, no password, database `test`), PostgreSQL on
# 127.0.0.1:5432 (trust, database `test`) and Redis on 127.0.0.1:6379 (the
# redis cache store's unique-job locks). Starts them when they are down.
set -uo pipefail

mariadb_up() { mysqladmin --protocol=tcp -h127.0.0.1 -uroot ping >/dev/null 2>&1; }
pg_up() { pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1; }

wait_for() {
  local name=$1 check=$2
  for _ in $(seq 1 60); do
    $check && return 0
    sleep 1
  done
  echo "services: $name did not come up" >&2
  return 1
}

if ! mariadb_up; then
  if [ -x /usr/sbin/mariadbd ]; then
    echo "services: starting MariaDB"
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  else
    echo "services: MariaDB is not installed; installing" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server >/dev/null
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  fi
  wait_for MariaDB mariadb_up || exit 1
fi
mysql --protocol=tcp -h127.0.0.1 -uroot -e 'create database if not exists test' || exit 1

if ! pg_up; then
  echo "services: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
  wait_for PostgreSQL pg_up || exit 1
fi
if ! psql -h 127.0.0.1 -U postgres -Atc "select 1 from pg_database where datname='test'" postgres | grep -q 1; then
  psql -h 127.0.0.1 -U postgres -c 'create database test' postgres >/dev/null || exit 1
fi
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }
if ! redis_up; then
  if ! command -v redis-server >/dev/null; then
    echo "services: Redis is not installed; installing" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  fi
  echo "services: starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no >/dev/null
  wait_for Redis redis_up || exit 1
fi
echo "services: MariaDB, PostgreSQL and Redis are up"
