#!/bin/sh
# pgbarrier's container entry point: `pgbarrier serve` with the container's arguments (the
# image's CMD, or compose's `command`), after two conveniences of the image:
#
# * PGBARRIER_PASSWORD (for the user PGBARRIER_USER, default root) becomes a password file
#   readable by this process only, so `docker run -e PGBARRIER_PASSWORD=... IMAGE` works;
#   a mounted file (PGBARRIER_PASSWORD_FILE, or --password-file) is used as it is.
# * Without any password source the container refuses to start, in one line saying how to
#   give one (pgbarrier listens on every interface here; trust would let anyone in).
set -eu

given=""
for arg in "$@"; do
    case "$arg" in
        --password-file|--password-file=*|--users-file|--users-file=*|--trust-any-host) given=1 ;;
    esac
done
if [ -z "$given" ] && [ -z "${PGBARRIER_PASSWORD_FILE:-}" ] && [ -z "${PGBARRIER_USERS_FILE:-}" ]; then
    if [ -z "${PGBARRIER_PASSWORD:-}" ]; then
        echo "pgbarrier: no password source: set PGBARRIER_PASSWORD (user PGBARRIER_USER, default root), or mount a password file and set PGBARRIER_PASSWORD_FILE (README, Container)" >&2
        exit 2
    fi
    umask 077
    file="$(mktemp)"
    printf '%s:%s\n' "${PGBARRIER_USER:-root}" "$PGBARRIER_PASSWORD" > "$file"
    export PGBARRIER_PASSWORD_FILE="$file"
fi
unset PGBARRIER_PASSWORD
exec pgbarrier serve "$@"
