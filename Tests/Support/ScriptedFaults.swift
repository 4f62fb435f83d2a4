import Foundation
import PkgKit

extension ScriptedTransport {
    /// A way for a scripted server to misbehave on one request: the in-memory twin of
    /// `FaultHTTPServer.Fault`.
    public enum Fault: Sendable, Equatable {
        /// The body stops after `bytes` (the connection closes).
        case dropAfter(bytes: Int)
        /// The body stalls after `bytes`, until the reader gives up.
        case stallAfter(bytes: Int)
        /// This status, with an empty body.
        case status(Int)
        /// The whole file with 200, whatever Range asked for.
        case ignoreRange
        /// `extra` bytes after the body; `Content-Length` honest, including them, or absent.
        case longBody(extra: Int, contentLength: FaultHTTPServer.LongBodyLength)
        /// A 206 whose `Content-Range` starts one byte later than asked.
        case wrongContentRange
        /// The connection breaks before any head.
        case reset

        /// `reply` (what a well-behaved server answers with `data` to `request`) with the fault.
        public func apply(to reply: Reply, serving data: Data, for request: HTTPRequest) -> Reply {
            var reply = reply
            switch self {
            case .dropAfter(let bytes):
                reply.steps = [.bytes(reply.body.prefix(bytes))]
            case .stallAfter(let bytes):
                reply.steps = [.bytes(reply.body.prefix(bytes)), .stall]
            case .status(let code):
                reply = .status(code)
            case .ignoreRange:
                reply = .serving(data, for: HTTPRequest(url: request.url, maximumBodyBytes: request.maximumBodyBytes))
            case .longBody(let extra, let length):
                // With an honest length, an HTTP client reads that many bytes and never sees the
                // rest: the transport hands over the body as it is.
                guard length != .honest else { break }
                let body = reply.body + Data(repeating: 0x5A, count: extra)
                reply.head?.contentLength = length == .includingExtra ? Int64(body.count) : nil
                reply.steps = [.bytes(body)]
            case .wrongContentRange:
                if let range = reply.head?.contentRange {
                    reply.head?.contentRange = ContentRange(first: range.first + 1, last: range.last, total: range.total)
                }
            case .reset:
                reply = Reply(head: nil, steps: [.fail(.connectionLost(url: request.url.absoluteString, "connection reset by peer"))])
            }
            return reply
        }
    }

    /// Faults to apply to the requests of each path, in order (nil: behave), or always.
    public final class FaultPlan: @unchecked Sendable {
        // @unchecked: every mutable field is guarded by `lock`.
        private let lock = NSLock()
        private var queued: [String: [Fault?]] = [:]
        private var standing: [String: Fault] = [:]

        /// An empty plan: every request behaves.
        public init() {}

        /// The next requests of the path ending in `name` meet these faults, one each.
        public func plan(_ name: String, _ faults: [Fault?]) { lock.withLock { queued[name, default: []] += faults } }

        /// Every request of the path ending in `name` meets `fault` (nil: behave again).
        public func always(_ name: String, _ fault: Fault?) { lock.withLock { standing[name] = fault } }

        /// The fault for this request, taken from the plan.
        public func fault(for request: HTTPRequest) -> Fault? {
            let path = request.url.path
            return lock.withLock {
                for (name, faults) in queued where path.hasSuffix("/" + name) && !faults.isEmpty {
                    queued[name]!.removeFirst()
                    return faults.first!
                }
                return standing.first { path.hasSuffix("/" + $0.key) }?.value
            }
        }
    }

    /// A transport serving the files under `root` at `base` as nginx would, with `faults`.
    public convenience init(serving root: String, base: URL, faults: FaultPlan, clock: ManualClock = ManualClock(),
                            chunkSize: Int = 16 << 10) {
        let basePath = base.path.hasSuffix("/") ? base.path : base.path + "/"
        self.init(serving: root, base: base, clock: clock, chunkSize: chunkSize) { request, reply in
            guard let fault = faults.fault(for: request) else { return reply }
            let data = FileManager.default.contents(atPath: root + "/" + request.url.path.dropFirst(basePath.count)) ?? Data()
            return fault.apply(to: reply, serving: data, for: request)
        }
    }
}

extension ScriptedTransport.Reply {
    /// The body bytes of the reply's steps.
    var body: Data {
        steps.reduce(into: Data()) { body, step in if case .bytes(let bytes) = step { body.append(bytes) } }
    }
}

/// Retries that wait no time at all: logic tests on a `ManualClock` never have to advance it for
/// a retry. How long the waits are is tested on its own.
public let instantRetries = RetryPolicy(maximumAttempts: 4, initialDelay: 0, multiplier: 2, maximumDelay: 0, jitter: 0)
