# Helpers shared by the tests/deploy scripts (sourced).

# free_port prints a TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_http URL SECONDS: waits until URL answers 200.
wait_http() {
	local url=$1 deadline=$((SECONDS + $2))
	while ((SECONDS < deadline)); do
		if [[ $(curl -s -o /dev/null -w '%{http_code}' "$url" || true) == 200 ]]; then
			return 0
		fi
		sleep 0.2
	done
	echo "no 200 from $url within $2 s" >&2
	return 1
}

# ensure_apt_tool TOOL PACKAGE: installs PACKAGE when TOOL is missing and
# this runs as root with apt-get; returns 1 when TOOL is still missing.
ensure_apt_tool() {
	command -v "$1" >/dev/null 2>&1 && return 0
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
		echo "installing $2 (for $1)" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null 2>&1 ||
			{ apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null 2>&1; } || true
	fi
	command -v "$1" >/dev/null 2>&1
}
