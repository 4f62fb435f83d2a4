# Sourced by the bench scripts: nginx on loopback with a configuration of its own, in a folder
# of its own, started as a daemon. Needs PY (python3) and die().

# A free TCP port on 127.0.0.1.
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_nginx DIR HTTP_LINES: writes DIR/nginx.conf whose http { } block holds HTTP_LINES (log
# formats, server blocks) besides the temp paths, and starts nginx on it; NG is DIR, NGINX the binary.
start_nginx() {
    NG=$1
    mkdir -p "$NG/tmp" "$NG/logs"
    cat > "$NG/nginx.conf" <<CONF
daemon on;
worker_processes 1;
pid $NG/nginx.pid;
error_log $NG/logs/error.log;
$( [ "$(id -u)" = 0 ] && echo "user root;" )
events { worker_connections 64; }
http {
    client_body_temp_path $NG/tmp/body; proxy_temp_path $NG/tmp/proxy; fastcgi_temp_path $NG/tmp/fastcgi;
    uwsgi_temp_path $NG/tmp/uwsgi; scgi_temp_path $NG/tmp/scgi;
$2
}
CONF
    NGINX=$(command -v nginx || echo /usr/sbin/nginx)
    "$NGINX" -c "$NG/nginx.conf" -p "$NG" || die "nginx did not start"
}

# Stops the nginx start_nginx started.
stop_nginx() { kill "$(cat "$NG/nginx.pid" 2>/dev/null)" 2>/dev/null; }
