#!/usr/bin/env bash
# Prepares the Laravel 8 test app in testdata/laravel for end-to-end tests.
# Idempotent; safe to run before every test run. `--install-only` installs
# the Debian packages when missing and does nothing else. Needs root only when the
# Debian packages are missing (it then runs apt-get).
#
# Environment (all optional):
#   DB_CONNECTION  sqlite (default) | mysql | pgsql
#   DB_HOST DB_PORT DB_DATABASE DB_USERNAME DB_PASSWORD
#                  sqlite: DB_DATABASE is a file (default database/database.sqlite,
#                  relative to the app); mysql/pgsql: defaults 127.0.0.1, db "laraworker_e2e",
#                  user root / postgres, empty password.
#   APP_KEY        base64:... key; a random one is generated when neither the
#                  environment nor an existing .env has one.
#   APP_CIPHER     AES-256-CBC (default), AES-128-CBC, AES-256-GCM, AES-128-GCM
#   CACHE_DRIVER   database (default) | file
#
# The app's .env is (re)written when it is missing or when DB_CONNECTION is set
# in the environment, so that later plain `php artisan ...` calls use the same
# database. Variables set in the environment of a `php artisan` call still win
# over .env (Laravel never overwrites existing environment variables).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
app="$here/laravel"

# php-redis: the redis cache store's unique-job locks (e2e TestUniqueLocksInRedisReleasedByGo).
# php-curl: the tests' stand-in for aws-sdk-php's SqsClient (laravel/aws-sqs-shim).
# php-predis: predis, the client Laravel's Redis Sentinel support needs (e2e TestRedisSentinelPHPAndGo).
# beanstalkd, php-pda-pheanstalk: the server and Laravel 8's client (pheanstalk 4) for the
# beanstalkd queue tests (store/beanstalkd, e2e TestBeanstalkd*), which start their own server.
debian_packages=(php-cli php-curl php-mysql php-pgsql php-sqlite3 php-mbstring php-redis php-predis php-laravel-framework beanstalkd php-pda-pheanstalk)

log() { printf 'setup-php: %s\n' "$*" >&2; }

install_packages() {
    local missing=()
    local pkg
    for pkg in "${debian_packages[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed'; then
            missing+=("$pkg")
        fi
    done
    if command -v php >/dev/null 2>&1 && [ -d /usr/share/php/Illuminate ] && [ ${#missing[@]} -eq 0 ]; then
        return
    fi
    if [ ${#missing[@]} -eq 0 ]; then
        missing=("${debian_packages[@]}")
    fi
    log "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Prints a value in .env syntax: single quotes are literal in phpdotenv, double
# quotes are used only when the value itself holds a single quote.
env_quote() {
    local v="$1"
    if [[ "$v" != *"'"* ]]; then
        printf "'%s'" "$v"
    else
        v="${v//\\/\\\\}"
        v="${v//\"/\\\"}"
        v="${v//\$/\\\$}"
        printf '"%s"' "$v"
    fi
}

# Reads KEY from the existing .env (unquoted, first match), empty if absent.
env_file_value() {
    [ -f "$app/.env" ] || return 0
    sed -n "s/^$1=//p" "$app/.env" | head -n1 | sed -e "s/^'\(.*\)'\$/\1/" -e 's/^"\(.*\)"$/\1/'
}

random_app_key() {
    php -r 'echo "base64:".base64_encode(random_bytes(32));'
}

write_env() {
    local key="${APP_KEY:-$(env_file_value APP_KEY)}"
    [ -n "$key" ] || key="$(random_app_key)"
    local tmp="$app/.env.tmp.$$"
    {
        echo "# Written by testdata/setup-php.sh"
        echo "APP_NAME=Laravel"
        echo "APP_ENV=local"
        echo "APP_DEBUG=true"
        echo "APP_KEY=$(env_quote "$key")"
        echo "APP_CIPHER=$(env_quote "${APP_CIPHER:-AES-256-CBC}")"
        echo "LOG_CHANNEL=single"
        echo "QUEUE_CONNECTION=database"
        echo "CACHE_DRIVER=$(env_quote "${CACHE_DRIVER:-database}")"
        echo "DB_CONNECTION=$(env_quote "$db_connection")"
        echo "DB_HOST=$(env_quote "$db_host")"
        echo "DB_PORT=$(env_quote "$db_port")"
        echo "DB_DATABASE=$(env_quote "$db_database")"
        echo "DB_USERNAME=$(env_quote "$db_username")"
        echo "DB_PASSWORD=$(env_quote "$db_password")"
    } >"$tmp"
    chmod 600 "$tmp"
    mv "$tmp" "$app/.env"
    log "wrote $app/.env ($db_connection)"
}

# Settings come from the environment, else from an existing .env, else defaults.
resolve_db_settings() {
    local from_env=0
    [ -n "${DB_CONNECTION:-}" ] && from_env=1
    pick() { # name default
        local name="$1" def="$2" val
        if [ -n "${!name+x}" ]; then val="${!name}"
        elif [ $from_env -eq 0 ]; then val="$(env_file_value "$name")"
        else val=""
        fi
        printf '%s' "${val:-$def}"
    }
    db_connection="$(pick DB_CONNECTION sqlite)"
    case "$db_connection" in
        sqlite)
            db_host=""; db_port=""; db_username=""; db_password=""
            db_database="$(pick DB_DATABASE database/database.sqlite)"
            ;;
        mysql)
            db_host="$(pick DB_HOST 127.0.0.1)"; db_port="$(pick DB_PORT 3306)"
            db_database="$(pick DB_DATABASE laraworker_e2e)"; db_username="$(pick DB_USERNAME root)"
            db_password="$(pick DB_PASSWORD '')"
            ;;
        pgsql)
            db_host="$(pick DB_HOST 127.0.0.1)"; db_port="$(pick DB_PORT 5432)"
            db_database="$(pick DB_DATABASE laraworker_e2e)"; db_username="$(pick DB_USERNAME postgres)"
            db_password="$(pick DB_PASSWORD '')"
            ;;
        *)
            log "unsupported DB_CONNECTION=$db_connection (want sqlite, mysql or pgsql)"
            exit 2
            ;;
    esac
}

# Creates the database itself through PDO, so no mysql/psql client is needed.
# Credentials travel in the environment, never on the command line.
create_database() {
    case "$db_connection" in
        sqlite)
            local file="$db_database"
            [[ "$file" == /* ]] || file="$app/$file"
            mkdir -p "$(dirname "$file")"
            [ -f "$file" ] || : >"$file"
            ;;
        mysql|pgsql)
            SETUP_DRIVER="$db_connection" SETUP_HOST="$db_host" SETUP_PORT="$db_port" \
            SETUP_DB="$db_database" SETUP_USER="$db_username" SETUP_PASS="$db_password" \
            php -r '
                $driver = getenv("SETUP_DRIVER"); $db = getenv("SETUP_DB");
                $host = getenv("SETUP_HOST"); $port = getenv("SETUP_PORT");
                $dsn = $driver === "mysql"
                    ? "mysql:host=$host;port=$port"
                    : "pgsql:host=$host;port=$port;dbname=postgres";
                try {
                    $pdo = new PDO($dsn, getenv("SETUP_USER"), getenv("SETUP_PASS"), [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
                } catch (PDOException $e) {
                    fwrite(STDERR, "setup-php: cannot connect to $driver at $host:$port: ".$e->getCode()."\n");
                    exit(1);
                }
                if ($driver === "mysql") {
                    $pdo->exec("CREATE DATABASE IF NOT EXISTS `".str_replace("`", "``", $db)."` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci");
                } else {
                    $q = $pdo->prepare("SELECT 1 FROM pg_database WHERE datname = ?");
                    $q->execute([$db]);
                    if (! $q->fetchColumn()) {
                        $pdo->exec("CREATE DATABASE \"".str_replace("\"", "\"\"", $db)."\"");
                    }
                }
            '
            ;;
    esac
}

main() {
    install_packages
    # --install-only: just make sure PHP and Laravel are there (CI runs this
    # before the tests, which prepare their own copies of the app).
    if [ "${1:-}" = "--install-only" ]; then
        return
    fi
    resolve_db_settings
    mkdir -p "$app/storage/logs" "$app/storage/framework/cache/data" "$app/bootstrap/cache"
    if [ ! -f "$app/.env" ] || [ -n "${DB_CONNECTION:-}" ]; then
        write_env
    fi
    create_database
    (cd "$app" && php artisan migrate --force --no-interaction)
}

main "$@"
