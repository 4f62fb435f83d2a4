import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 server for tests: serves the files of a folder on 127.0.0.1 (a free port),
/// with Range support (206, `Content-Range`), and misbehaves on request, following a per-path
/// plan of faults, or, for paths without a plan, whatever a chooser picks per request (the chaos
/// soak's random faults). One thread per connection; every response closes its connection.
/// Every request is logged (path, Range header, status, body bytes sent) for assertions.
public final class FaultHTTPServer: @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `lock`; the socket calls are thread-safe.

    /// One way to misbehave, applied to one request.
    public enum Fault: Sendable, Equatable {
        /// Send the head and the first `bytes` of the body, then close the connection.
        case dropAfter(bytes: Int)
        /// Answer with this status and a short text body (503, 500, 404…).
        case status(Int)
        /// Answer 200 with the whole file, whatever the Range header asked.
        case ignoreRange
        /// Send `extra` bytes after the file's; `Content-Length` says the file's length
        /// (`.honest`), includes the extra bytes (`.includingExtra`), or is absent (`.absent`,
        /// the body ends when the connection closes).
        case longBody(extra: Int, contentLength: LongBodyLength)
        /// Send the body at this many bytes per second.
        case slow(bytesPerSecond: Int)
        /// Send the head and the first `bytes` of the body, then nothing, holding the connection
        /// open until the client closes it or the server stops.
        case stallAfter(bytes: Int)
        /// Answer 200 with an HTML error page instead of the file.
        case htmlInsteadOfFile
        /// Send the body less its last `missing` bytes, then close; `Content-Length` says the
        /// length actually sent (`.sent`: the response looks whole) or is absent (`.absent`).
        case shortBody(missing: Int, contentLength: ShortBodyLength)
        /// Send `piece` bytes every `interval` seconds for `duration` seconds, then the rest at once.
        case trickle(piece: Int, interval: TimeInterval, duration: TimeInterval)
        /// Answer 206 with a `Content-Range`, and the bytes it names, other than those asked for:
        /// the range moved by `shift` bytes (or, when it covers the whole file, one byte shorter).
        /// A request without a Range header gets a 206 too.
        case wrongContentRange(shift: Int)
        /// Answer as asked, with the body's byte at `at` inverted (when the body has one): a
        /// server, cache or middlebox that alters content in transit.
        case invertByte(at: Int)
    }

    /// What a `.longBody` response says its length is.
    public enum LongBodyLength: Sendable, Equatable { case honest, includingExtra, absent }

    /// What a `.shortBody` response says its length is.
    public enum ShortBodyLength: Sendable, Equatable { case sent, absent }

    /// A request as a chooser (`choose(_:)`) sees it.
    public struct Request: Sendable, Equatable {
        /// The request path, `/` first.
        public var path: String
        /// The Range header, nil when the request had none.
        public var range: String?
        /// The length of the body a well-behaved answer would have (the range's, else the
        /// file's); nil when that answer is not a file's bytes (404, 416).
        public var bodyLength: Int?
    }


    /// The folder served.
    public let root: String
    /// The port listened on.
    public let port: Int

    private let listener: Int32
    private let lock = NSLock()
    private var plans: [String: [Fault?]] = [:]
    private var always: [String: Fault] = [:]
    private var chooser: (@Sendable (Request) -> Fault?)?
    private var stallLimit: TimeInterval?
    private var sentInAll = 0
    private var records: [ServedRequest] = []
    private var answering = 0
    private var connections: Set<Int32> = []
    private var stopped = false
    private let threads = DispatchGroup()

    /// Starts serving `root` on 127.0.0.1 at a free port.
    public init(root: String) throws {
        self.root = root
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError("socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw ServerError("bind/listen: \(message)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        threads.enter()
        Thread.detachNewThread { [self] in
            acceptLoop()
            threads.leave()
        }
    }

    deinit { stop() }

    /// `http://127.0.0.1:PORT/` plus `path`.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)/" + (path.hasPrefix("/") ? String(path.dropFirst()) : path))!
    }

    /// The next requests for `path` get these faults, one each, in order (nil: behave).
    public func plan(_ path: String, _ faults: [Fault?]) {
        lock.withLock { plans[normalized(path), default: []].append(contentsOf: faults) }
    }

    /// Every request for `path` gets `fault` (after any planned ones), until cleared with nil.
    public func always(_ path: String, _ fault: Fault?) {
        lock.withLock { always[normalized(path)] = fault }
    }

    /// Every request for a path with no planned or `always` fault is answered with the fault
    /// `chooser` returns for it (nil: behave); nil stops choosing. The chooser runs on the
    /// connection's thread, so it must be thread-safe.
    public func choose(_ chooser: (@Sendable (Request) -> Fault?)?) {
        lock.withLock { self.chooser = chooser }
    }

    /// The longest a `.stallAfter` holds its connection before closing it; nil (the default):
    /// until the client closes it or the server stops.
    public var longestStall: TimeInterval? {
        get { lock.withLock { stallLimit } }
        set { lock.withLock { stallLimit = newValue } }
    }

    /// Body bytes sent so far, over every request; it grows while a body is being sent (a
    /// slice of at most 64 KiB at a time), so it tells how far a transfer has come.
    public var bytesSent: Int { lock.withLock { sentInAll } }

    /// Connections accepted and not yet closed by the server: 0 once every answer so far has
    /// ended with the server's close (a FIN on the wire).
    public var openConnections: Int { lock.withLock { connections.count } }

    /// Waits until no request is being answered, `timeout` seconds at most; false when some
    /// answer is still underway (a stall holding its connection, a send blocked by a client
    /// that does not read).
    public func waitUntilIdle(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while lock.withLock({ answering > 0 }) {
            guard Date() < deadline else { return false }
            usleep(2_000)
        }
        return true
    }

    /// Every request answered so far, in order.
    ///
    /// A client can finish reading a response before its thread here has written the record, so
    /// this first waits (2 s at most: a stalled answer never ends by itself) for answers underway.
    public var log: [ServedRequest] {
        let patience = Date().addingTimeInterval(2)
        while lock.withLock({ answering > 0 }) && Date() < patience { usleep(1_000) }
        return lock.withLock { records }
    }

    /// The requests for one path.
    public func log(for path: String) -> [ServedRequest] { log.filter { $0.path == normalized(path) } }

    /// Stops listening, cuts open connections and waits for every thread to end.
    public func stop() {
        // Shut down under the lock that connections are closed under: a descriptor closed and
        // reused by another test running in this process must never be shut down here.
        let first: Bool = lock.withLock {
            if stopped { return false }
            stopped = true
            shutdown(listener, Int32(SHUT_RDWR))
            for fd in connections { shutdown(fd, Int32(SHUT_RDWR)) }
            return true
        }
        guard first else { return }
        threads.wait()
        close(listener)
    }

    private func normalized(_ path: String) -> String { path.hasPrefix("/") ? path : "/" + path }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                // A client that gave up before its connection was taken is not the end.
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let accepted: Bool = lock.withLock {
                if stopped { return false }
                connections.insert(fd)
                threads.enter()
                return true
            }
            guard accepted else { close(fd); return }
            Thread.detachNewThread { [self] in
                serve(fd)
                lock.withLock {
                    _ = connections.remove(fd)
                    close(fd)
                }
                threads.leave()
            }
        }
    }

    // MARK: - One connection

    private func serve(_ fd: Int32) {
        guard let head = readHead(fd) else { return }
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2 else { return }
        var path = String(parts[1])
        if let query = path.firstIndex(of: "?") { path = String(path[..<query]) }
        path = path.removingPercentEncoding ?? path
        var range: String?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == "range" {
                range = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        let file = path.split(separator: "/").contains("..") || isDirectory(root + path)
            ? nil : FileManager.default.contents(atPath: root + path)
        var bodyLength = file?.count
        if let file, let range {
            bodyLength = parseRange(range, size: file.count).map { $0.1 - $0.0 + 1 }
        }
        let (fault, chooser): (Fault?, (@Sendable (Request) -> Fault?)?) = lock.withLock {
            answering += 1
            if var queue = plans[path], !queue.isEmpty {
                let next = queue.removeFirst()
                plans[path] = queue
                return (next, nil)
            }
            if let fault = always[path] { return (fault, nil) }
            return (nil, self.chooser)
        }
        // Outside the lock: a chooser may take locks of its own.
        let chosen = fault ?? chooser?(Request(path: path, range: range, bodyLength: bodyLength))
        let (status, sent) = respond(fd, path: path, range: range, file: file, fault: chosen)
        lock.withLock {
            records.append(ServedRequest(path: path, range: range, status: status, bodyBytesSent: sent))
            answering -= 1
        }
    }

    private func respond(_ fd: Int32, path: String, range: String?, file: Data?, fault: Fault?) -> (Int, Int) {
        if case .status(let code) = fault {
            return sendSimple(fd, status: code, body: "status \(code) from the fault server\n")
        }
        if fault == .htmlInsteadOfFile {
            return sendSimple(fd, status: 200, body: "<!DOCTYPE html><html><body><h1>Oops</h1><p>Something went wrong.</p></body></html>\n",
                              type: "text/html")
        }
        guard let data = file else {
            return sendSimple(fd, status: 404, body: "not found\n")
        }
        var status = 200
        // The body is data[lower..<upper].
        var lower = 0, upper = data.count
        var extraHeaders = ""
        if let range, fault != .ignoreRange {
            guard let (first, last) = parseRange(range, size: data.count) else {
                return sendSimple(fd, status: 416, body: "range not satisfiable\n", extra: "Content-Range: bytes */\(data.count)\r\n")
            }
            status = 206
            (lower, upper) = (first, last + 1)
        }
        if case .wrongContentRange(let shift) = fault {
            status = 206
            (lower, upper) = Self.misplaced(lower, upper, size: data.count, shift: shift)
        }
        if status == 206 {
            extraHeaders = "Content-Range: bytes \(lower)-\(upper - 1)/\(data.count)\r\n"
        }
        var payload = data.subdata(in: lower..<upper)
        if case .invertByte(let at) = fault, at >= 0, at < payload.count { payload[at] ^= 0xFF }
        var length: Int? = payload.count
        if case .longBody(let extra, let announce) = fault {
            payload.append(Data(repeating: 0x5A, count: extra))
            switch announce {
            case .honest: break
            case .includingExtra: length = payload.count
            case .absent: length = nil
            }
        }
        if case .shortBody(let missing, let announce) = fault {
            payload = payload.prefix(max(0, payload.count - missing))
            length = announce == .sent ? payload.count : nil
        }
        var head = "HTTP/1.1 \(status) \(reason(status))\r\nContent-Type: application/octet-stream\r\n\(extraHeaders)"
        if let length { head += "Content-Length: \(length)\r\n" }
        head += "Accept-Ranges: bytes\r\nConnection: close\r\n\r\n"
        guard sendAll(fd, Data(head.utf8)) else { return (status, 0) }
        switch fault {
        case .dropAfter(let bytes):
            return (status, sendBody(fd, payload.prefix(bytes), bytesPerSecond: nil))
        case .stallAfter(let bytes):
            let sent = sendBody(fd, payload.prefix(bytes), bytesPerSecond: nil)
            let limit = lock.withLock { stallLimit }
            let end = limit.map { Date().addingTimeInterval($0) }
            var probe: UInt8 = 0
            while !lock.withLock({ stopped }) {
                if let end, Date() >= end { break }
                let count = recv(fd, &probe, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
                if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { break }
                usleep(50_000)
            }
            return (status, sent)
        case .slow(let rate):
            return (status, sendBody(fd, payload, bytesPerSecond: rate))
        case .trickle(let piece, let interval, let duration):
            return (status, trickle(fd, payload, piece: piece, interval: interval, duration: duration))
        default:
            return (status, sendBody(fd, payload, bytesPerSecond: nil))
        }
    }

    /// The range `.wrongContentRange` answers instead of `lower..<upper`: moved by `shift` (or
    /// by `-shift` when that stays inside the file), else one byte shorter.
    static func misplaced(_ lower: Int, _ upper: Int, size: Int, shift: Int) -> (Int, Int) {
        let length = upper - lower
        for candidate in [lower + shift, lower - shift] {
            let moved = min(max(candidate, 0), size - length)
            if moved != lower { return (moved, moved + length) }
        }
        return length > 1 ? (lower, upper - 1) : (lower, upper)
    }

    /// Sends `piece` bytes every `interval` seconds until `duration` has passed, then the rest.
    private func trickle(_ fd: Int32, _ body: Data, piece: Int, interval: TimeInterval, duration: TimeInterval) -> Int {
        let end = Date().addingTimeInterval(duration)
        var sent = 0
        while sent < body.count && Date() < end {
            if lock.withLock({ stopped }) { return sent }
            let slice = body.dropFirst(sent).prefix(max(1, piece))
            guard sendAll(fd, Data(slice)) else { return sent }
            sent += slice.count
            lock.withLock { sentInAll += slice.count }
            Thread.sleep(forTimeInterval: max(0, interval))
        }
        return sent + sendBody(fd, body.dropFirst(sent), bytesPerSecond: nil)
    }

    private func isDirectory(_ path: String) -> Bool {
        var flag: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &flag) && flag.boolValue
    }

    /// `bytes=a-b`, `bytes=a-`, `bytes=-n` against a file of `size` bytes.
    private func parseRange(_ header: String, size: Int) -> (Int, Int)? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        if spec[0].isEmpty {
            guard let suffix = Int(spec[1]), suffix > 0, size > 0 else { return nil }
            return (max(0, size - suffix), size - 1)
        }
        guard let first = Int(spec[0]), first < size else { return nil }
        let last = spec[1].isEmpty ? size - 1 : min(Int(spec[1]) ?? -1, size - 1)
        return last >= first ? (first, last) : nil
    }

    private func sendSimple(_ fd: Int32, status: Int, body: String, type: String = "text/plain", extra: String = "") -> (Int, Int) {
        let bytes = Data(body.utf8)
        let head = "HTTP/1.1 \(status) \(reason(status))\r\nContent-Type: \(type)\r\n\(extra)Content-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
        guard sendAll(fd, Data(head.utf8)) else { return (status, 0) }
        return (status, sendAll(fd, bytes) ? bytes.count : 0)
    }

    private func sendBody(_ fd: Int32, _ body: Data, bytesPerSecond: Int?) -> Int {
        // At full speed, 64 KiB slices, so that `bytesSent` follows the transfer.
        guard let rate = bytesPerSecond, rate > 0 else { return sendSlices(fd, body, slice: 65_536, pause: 0) }
        // Ten slices a second, each a tenth of the rate.
        return sendSlices(fd, body, slice: max(1, rate / 10), pause: 100_000)
    }

    /// Sends `body` `slice` bytes at a time, `pause` microseconds apart; the bytes sent.
    private func sendSlices(_ fd: Int32, _ body: Data, slice: Int, pause: useconds_t) -> Int {
        var sent = 0
        while sent < body.count {
            if lock.withLock({ stopped }) { break }
            let piece = body[body.startIndex + sent ..< body.startIndex + min(body.count, sent + slice)]
            guard sendAll(fd, Data(piece)) else { break }
            sent += piece.count
            lock.withLock { sentInAll += piece.count }
            if pause > 0 { usleep(pause) }
        }
        return sent
    }

    private func sendAll(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += count
            }
            return true
        }
    }

    private func readHead(_ fd: Int32) -> String? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end = Data("\r\n\r\n".utf8)
        while data.range(of: end) == nil {
            guard data.count < 65536 else { return nil }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            data.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: data, as: UTF8.self)
    }

    private func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 206: return "Partial Content"
        case 404: return "Not Found"
        case 416: return "Range Not Satisfiable"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }
}

/// A test server could not start.
public struct ServerError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) {
        self.description = description
    }
}
