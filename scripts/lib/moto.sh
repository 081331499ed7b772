# Sourced by scripts/services: moto's server (PyPI), a local AWS API for the control plane's pre-warm (Application
# Auto Scaling scheduled actions on the ECS services' scalable targets). Installed once into a venv under .tools/,
# started on 127.0.0.1, its state in memory (a restart forgets the actions; the worker's sync puts them back).
#
#   ensure_moto                  installs moto[server] into .tools/moto-$MOTO_VERSION if missing
#   moto_start | moto_stop | moto_status
#   moto_env                     what services.env gets: the SDK's endpoint for Application Auto Scaling
#
# Knobs: ONSALE_MOTO_PORT (14590).
MOTO_VERSION=5.2.5
MOTO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MOTO_VENV="$MOTO_ROOT/.tools/moto-$MOTO_VERSION"
MOTO_PORT="${ONSALE_MOTO_PORT:-14590}"
MOTO_DIR="${ONSALE_DATA:-$MOTO_ROOT/.data}/moto"
MOTO_PID="$MOTO_DIR/moto.pid"
MOTO_LOG="$MOTO_DIR/moto.log"

ensure_moto() {
  [[ -x "$MOTO_VENV/bin/moto_server" ]] && return 0
  command -v python3 >/dev/null || { echo "ensure_moto: python3 is missing" >&2; return 1; }
  echo "[moto] installing moto[server]==$MOTO_VERSION into ${MOTO_VENV#"$MOTO_ROOT"/}" >&2
  # A venv's scripts name their interpreter by absolute path, so it is built where it lives; a half-done install
  # has no moto_server yet and is simply completed by the next call.
  python3 -m venv "$MOTO_VENV" &&
    "$MOTO_VENV/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
}

moto_running() { local p; p="$(cat "$MOTO_PID" 2>/dev/null)"; [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null; }
# moto's own dashboard data answers once the server serves requests.
moto_ready() { curl -fsS -o /dev/null "http://127.0.0.1:$MOTO_PORT/moto-api/data.json" 2>/dev/null; }

moto_start() {
  mkdir -p "$MOTO_DIR"
  if moto_running && moto_ready; then echo "[moto] already running (pid $(cat "$MOTO_PID"), port $MOTO_PORT)" >&2; return 0; fi
  ensure_moto || { echo "[moto] install failed" >&2; return 1; }
  echo "[moto] starting moto_server on 127.0.0.1:$MOTO_PORT" >&2
  setsid nohup bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$MOTO_PID" \
    "$MOTO_VENV/bin/moto_server" -H 127.0.0.1 -p "$MOTO_PORT" >>"$MOTO_LOG" 2>&1 </dev/null 8>&- 9>&- &
  local i
  for ((i = 0; i < 300; i++)); do moto_ready && return 0; sleep 0.1; done
  echo "[moto] not answering on 127.0.0.1:$MOTO_PORT; see ${MOTO_LOG#"$MOTO_ROOT"/}" >&2
  tail -n 20 "$MOTO_LOG" >&2
  return 1
}

moto_stop() {
  local p; p="$(cat "$MOTO_PID" 2>/dev/null)"
  if [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null; then
    echo "[moto] stopping (pid $p)" >&2
    kill -TERM "$p" 2>/dev/null || true
    local i; for ((i = 0; i < 50; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$MOTO_PID"
}

moto_status() {
  if moto_running && moto_ready; then echo "moto: running (pid $(cat "$MOTO_PID"), http://127.0.0.1:$MOTO_PORT)"; return 0; fi
  echo "moto: stopped"; return 1
}

# The AWS SDK's per-service endpoint variable (AWS_ENDPOINT_URL_<SERVICE ID>): only Application Auto Scaling goes to
# moto. No credentials are exported (every process would then sign its AWS calls with them): moto takes any, and
# its clients name their own.
moto_env() {
  echo "export AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING=http://127.0.0.1:$MOTO_PORT"
}
