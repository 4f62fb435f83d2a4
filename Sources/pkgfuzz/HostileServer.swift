import Foundation
import PkgKit

/// An in-memory web server for the delta target: it serves the catalog and both packages as a
/// server that honours Range does, except where the fuzzer's script says otherwise. Each
/// instruction names one request for the new package (by its place among them) and how to
/// misbehave on it: alter its body, ignore the range, cut or lengthen the body, answer another
/// range or an error status. Nothing here sleeps or touches a socket.
final class HostileServer: HTTPTransport, @unchecked Sendable {
    // @unchecked: `served` and `alteringFromHere` are touched only under `lock`.

    /// One way to answer a request.
    enum Fault: UInt8, CaseIterable {
        /// The first byte of the body inverted (the server of issue 38).
        case invertFirstByte
        /// One byte of the body, at a place the parameter picks, inverted.
        case flipByte
        /// 200 and the whole package, for a Range request.
        case ignoreRange
        /// The body short of its end, `Content-Length` saying what is sent.
        case shortBody
        /// The connection lost part-way.
        case dropped
        /// 503.
        case unavailable
        /// 404.
        case notFound
        /// 206 with the range moved by the parameter, bytes to match.
        case otherRange
        /// More bytes after the body, `Content-Length` counting them.
        case longBody
        /// The first byte of this body and of every later one inverted (issue 38's server, which
        /// alters each range from one file's data on).
        case invertFromHere
        /// From this request on, the package's byte at a place the parameter picks (scaled to
        /// the package's size) inverted in every body that holds it: content altered in transit,
        /// wherever the client's ranges happen to fall.
        case alterPackageByte
    }

    /// One instruction: the request it applies to, what to do, and a parameter (an offset or a
    /// count, scaled to the body).
    struct Instruction {
        var request: Int
        var fault: Fault
        var parameter: Int

        /// Four bytes of script: request, fault, and a 16-bit parameter.
        init(_ bytes: ArraySlice<UInt8>) {
            let b = Array(bytes)
            request = Int(b[0] % 8)
            fault = Fault(rawValue: b[1] % UInt8(Fault.allCases.count))!
            parameter = Int(b[2]) << 8 | Int(b[3])
        }

        /// The four bytes that mean it.
        static func encode(request: Int, _ fault: Fault, parameter: Int = 0) -> [UInt8] {
            [UInt8(request), fault.rawValue, UInt8(parameter >> 8 & 0xFF), UInt8(parameter & 0xFF)]
        }
    }

    /// The catalog's URL.
    static let catalogURL = URL(string: "http://fuzz.invalid/catalog.json")!

    private let files: [String: Data]
    private let latestPath: String
    private let script: [Instruction]
    private let lock = NSLock()
    private var served = 0
    private var alteringFromHere = false
    private var alteredOffsets: Set<Int64> = []

    /// Serves `files` by URL path; requests for `latestPath` follow `script`.
    init(files: [String: Data], latestPath: String, script: [Instruction]) {
        self.files = files
        self.latestPath = latestPath
        self.script = script
    }

    /// Requests for the new package answered so far.
    var latestRequests: Int { lock.withLock { served } }

    /// The answer to `request`: the file's bytes, or the range asked for, unless an
    /// instruction for it says otherwise.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let path = request.url.path
        guard let data = files[path] else { return Self.reply(404, body: Data()) }
        let size = Int64(data.count)
        var lower: Int64 = 0, upper = size
        if let range = request.range {
            guard range.lowerBound < size else { return Self.reply(416, body: Data()) }
            (lower, upper) = (range.lowerBound, min(range.upperBound ?? size, size))
        }
        var fault: Instruction?
        var invert = false
        var altered: Set<Int64> = []
        if path == latestPath {
            lock.withLock {
                fault = script.first { $0.request == served }
                served += 1
                if fault?.fault == .invertFromHere { alteringFromHere = true }
                if let fault, fault.fault == .alterPackageByte { alteredOffsets.insert(Int64(fault.parameter) * size / 65_536) }
                invert = alteringFromHere
                altered = alteredOffsets
            }
        }
        var status = request.range == nil ? 200 : 206
        var length: Int64?
        var failAfter: Int?
        switch fault?.fault {
        case .ignoreRange?: (status, lower, upper) = (200, 0, size)
        case .otherRange?:
            let shift = Int64(fault!.parameter % 4096 + 1)
            let moved = min(max(0, lower + shift), max(0, size - (upper - lower)))
            (upper, lower) = (moved + (upper - lower), moved)
            status = 206
        case .unavailable?: return Self.reply(503, body: Data())
        case .notFound?: return Self.reply(404, body: Data())
        default: break
        }
        var body = data.subdata(in: Int(lower) ..< Int(upper))
        switch fault?.fault {
        case .invertFirstByte?: invert = true
        case .flipByte? where !body.isEmpty:
            let at = body.startIndex + fault!.parameter * body.count / 65_536
            body[at] ^= 0xFF
        case .shortBody?: body = body.prefix(max(0, body.count - 1 - fault!.parameter % max(1, body.count)))
        case .dropped?: failAfter = fault!.parameter * body.count / 65_536
        case .longBody?: body.append(Data(repeating: 0x5A, count: fault!.parameter % 4096 + 1))
        default: break
        }
        if invert, !body.isEmpty { body[body.startIndex] ^= 0xFF }
        for offset in altered where offset >= lower && offset < lower + Int64(body.count) {
            body[body.startIndex + Int(offset - lower)] ^= 0xFF
        }
        length = failAfter == nil ? Int64(body.count) : Int64(upper - lower)
        let head = HTTPResponseHead(statusCode: status, contentLength: length,
                                    contentRange: status == 206 ? ContentRange(first: lower, last: upper - 1, total: size) : nil)
        return HTTPResponse(head: head, body: Self.body(body, failAfter: failAfter, url: request.url.absoluteString))
    }

    /// A bare status with `body`.
    private static func reply(_ status: Int, body: Data) -> HTTPResponse {
        HTTPResponse(head: HTTPResponseHead(statusCode: status, contentLength: Int64(body.count)), body: Self.body(body, failAfter: nil, url: ""))
    }

    /// `data` in pieces of 64 KiB; with `failAfter`, the connection is lost once that many
    /// bytes have been handed over.
    private static func body(_ data: Data, failAfter: Int?, url: String) -> HTTPBody {
        let reader = BodyReader(data.prefix(failAfter ?? data.count), fails: failAfter != nil, url: url)
        return HTTPBody(next: { try reader.next() }, cancel: {})
    }
}

/// The rest of one body, handed over a piece at a time.
private final class BodyReader: @unchecked Sendable {
    // @unchecked: `position` is touched only under `lock`.
    private let data: Data
    private let fails: Bool
    private let url: String
    private let lock = NSLock()
    private var position = 0

    /// Hands over `data`, then ends, or (with `fails`) loses the connection.
    init(_ data: Data, fails: Bool, url: String) {
        (self.data, self.fails, self.url) = (data, fails, url)
    }

    /// The next piece, nil at the end.
    func next() throws -> Data? {
        try lock.withLock {
            guard position < data.count else {
                if fails { throw TransportError.connectionLost(url: url, "lost by the fuzzer's server") }
                return nil
            }
            let end = min(data.count, position + 65_536)
            defer { position = end }
            return data.subdata(in: data.startIndex + position ..< data.startIndex + end)
        }
    }
}
