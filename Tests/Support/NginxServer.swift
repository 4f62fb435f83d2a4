import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Debian's nginx (`/usr/sbin/nginx`, installed by `make deps`) serving a folder on a free
/// loopback port, for tests: its own config, pid file, temp and log folders in a temp folder,
/// run in the foreground (`daemon off`) as the test's user, stopped by pid. The access log
/// records, per request, the path, the Range header, the status and the body bytes sent.
public final class NginxServer: @unchecked Sendable {
    // @unchecked: `process` is set in init and only read afterwards; `stop` is guarded by `lock`.


    /// The nginx binary used.
    public static let binary = "/usr/sbin/nginx"

    /// True when nginx is installed.
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    /// The folder served.
    public let root: String
    /// The port listened on (127.0.0.1).
    public let port: Int
    /// The temp folder holding config, logs, pid file and nginx's temp folders.
    public let directory: String
    /// True when it speaks HTTPS (only).
    public let isTLS: Bool

    private let process: Process
    private let lock = NSLock()
    private var stopped = false

    /// Starts nginx serving `root` and waits until it accepts connections. `limitRate` slows
    /// every response to that many bytes per second; `honorRanges: false` makes nginx answer
    /// 200 with the whole file to Range requests (`max_ranges 0`). With `tls`, it speaks HTTPS
    /// with that certificate, in the TLS `protocols` and `ciphers` given (nginx's `ssl_protocols`
    /// and `ssl_ciphers`). `server`, given the port, replaces the whole `server { }` block (a
    /// configuration as a user writes it).
    public init(root: String, limitRate: Int? = nil, honorRanges: Bool = true,
                tls: TestCertificates.Server? = nil, protocols: String = "TLSv1.2 TLSv1.3", ciphers: String = "HIGH:!aNULL",
                server: ((Int) -> String)? = nil) throws {
        guard Self.isAvailable else { throw ServerError("\(Self.binary) is not installed: run `make deps`") }
        self.root = root
        isTLS = tls != nil
        directory = NSTemporaryDirectory() + "pkgtool-nginx-" + UUID().uuidString
        for folder in ["", "/logs", "/temp"] {
            try FileManager.default.createDirectory(atPath: directory + folder, withIntermediateDirectories: true)
        }
        var lastError = ""
        // A free port is found by binding port 0; another process may take it before nginx
        // does, so try a few.
        for _ in 0..<5 {
            let candidate = try Self.freePort()
            let listen = tls.map { "listen 127.0.0.1:\(candidate) ssl;\n        ssl_certificate \($0.certificate);\n"
                + "        ssl_certificate_key \($0.key);\n        ssl_protocols \(protocols);\n        ssl_ciphers \(ciphers);" }
                ?? "listen 127.0.0.1:\(candidate);"
            try Self.config(listen: listen, port: candidate, root: root, directory: directory, limitRate: limitRate,
                            honorRanges: honorRanges, server: server)
                .write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.binary)
            process.arguments = ["-p", directory + "/", "-c", directory + "/nginx.conf", "-e", directory + "/logs/error.log"]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if Self.waitUntilListening(candidate, process: process) {
                self.process = process
                port = candidate
                return
            }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
            }
            process.waitUntilExit()
            lastError = (try? String(contentsOfFile: directory + "/logs/error.log", encoding: .utf8)) ?? "no error log"
        }
        try? FileManager.default.removeItem(atPath: directory)
        throw ServerError("nginx did not start: \(lastError)")
    }

    deinit { stop() }

    /// `http://127.0.0.1:PORT/` (`https://` with TLS, and `host` for another name of this
    /// machine, `localhost`) plus `path`.
    public func url(_ path: String, host: String = "127.0.0.1") -> URL {
        URL(string: "\(isTLS ? "https" : "http")://\(host):\(port)/" + (path.hasPrefix("/") ? String(path.dropFirst()) : path))!
    }

    /// The access log so far. nginx writes a line when a response ends, so a test that has just
    /// received a body may ask for `atLeast` lines and wait for them (30 seconds at most: a
    /// bound for a line that never comes, not a guess at how long nginx takes on a busy machine).
    public func log(atLeast count: Int = 0) -> [ServedRequest] {
        let deadline = Date().addingTimeInterval(30)
        while true {
            let records = readLog()
            if records.count >= count || Date() > deadline { return records }
            usleep(20_000)
        }
    }

    /// Stops nginx (SIGQUIT, then SIGKILL after 5 seconds), waits for it to exit, and removes
    /// its temp folder.
    public func stop() {
        let first: Bool = lock.withLock {
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        let pid = process.processIdentifier
        if process.isRunning { kill(pid, SIGQUIT) }
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func readLog() -> [ServedRequest] {
        guard let text = try? String(contentsOfFile: directory + "/logs/access.log", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 4, let status = Int(fields[2]), let bytes = Int(fields[3]) else { return nil }
            return ServedRequest(path: fields[0], range: fields[1] == "-" ? nil : fields[1], status: status, bodyBytesSent: bytes)
        }
    }

    private static func config(listen: String, port: Int, root: String, directory: String, limitRate: Int?, honorRanges: Bool,
                               server: ((Int) -> String)?) -> String {
        // As root, nginx would hand its workers to `nobody`, who may not read the test's files.
        let user = getuid() == 0 ? "user root;\n" : ""
        let plainServer = """
            server {
                \(listen)
                root \(root);
                \(limitRate.map { "limit_rate \($0);" } ?? "")
                \(honorRanges ? "" : "max_ranges 0;")
                location / { }
            }
            """
        return """
        \(user)worker_processes 1;
        daemon off;
        pid \(directory)/nginx.pid;
        error_log \(directory)/logs/error.log warn;
        events { worker_connections 128; }
        http {
            log_format pkgtool '$request_uri\\t$http_range\\t$status\\t$body_bytes_sent';
            access_log \(directory)/logs/access.log pkgtool;
            client_body_temp_path \(directory)/temp/client;
            proxy_temp_path \(directory)/temp/proxy;
            fastcgi_temp_path \(directory)/temp/fastcgi;
            uwsgi_temp_path \(directory)/temp/uwsgi;
            scgi_temp_path \(directory)/temp/scgi;
            types { application/json json; application/octet-stream pkg; text/plain sig; }
            default_type application/octet-stream;
            sendfile on;
            keepalive_timeout 30;
            \(server?(port) ?? plainServer)
        }

        """
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw ServerError("bind: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func waitUntilListening(_ port: Int, process: Process) -> Bool {
        // A bound for an nginx that never listens (it exits when it cannot), not a start-up time.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && process.isRunning {
            if let fd = LoopbackListener.connected(to: port) {
                close(fd)
                return true
            }
            usleep(20_000)
        }
        return false
    }
}
