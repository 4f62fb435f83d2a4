import Foundation

/// A kind of fault the chaos soak's server answers a request with, as the report counts them.
public enum SoakFault: String, CaseIterable, Sendable, Comparable {
    /// The head and part of the body (`Content-Length` the whole), then the connection closed.
    case drop = "drop at a random offset"
    /// The head and part of the body, then silence until the client gives up.
    case stall = "stall (silent connection)"
    /// A few bytes at a time, never silent for long, then the rest.
    case trickle = "trickle"
    /// The body and then more, `Content-Length` counting the extra bytes.
    case overlongWithLength = "overlong body, with length"
    /// The body and then more, no `Content-Length`: it ends when the connection closes.
    case overlongWithoutLength = "overlong body, no length"
    /// An honest `Content-Length`, and more bytes after the body.
    case overlongPastLength = "overlong body past its length"
    /// Less than the body, `Content-Length` saying what was sent: the response looks whole.
    case shortWithLength = "short body, with length"
    /// Less than the body, no `Content-Length`, then the connection closed.
    case shortWithoutLength = "short body, no length"
    /// 500, 502 or 503.
    case serverError = "5xx"
    /// 404 for a file that is there.
    case notFound = "404"
    /// 200 and the whole file, for a request with a Range header.
    case wholeForRange = "200 for a Range request"
    /// 206 with a `Content-Range`, and its bytes, other than the range asked for.
    case wrongContentRange = "206, wrong Content-Range"
    /// The catalog cut short, with or without a `Content-Length` for what was sent.
    case truncatedCatalog = "truncated catalog"
    /// An HTML error page, status 200, for the catalog.
    case htmlCatalog = "HTML page for the catalog"
    /// 206 as asked, the first byte of the range inverted (issue 38's server, which did so from
    /// one file's data on).
    case alteredRangeStart = "206, first byte inverted"
    /// 206 as asked, one byte of the range inverted.
    case alteredRange = "206, a byte inverted"
    /// 200 and the whole file, one byte of it inverted.
    case alteredBody = "200, a byte inverted"
    /// The first byte of a file that has no checksum in its package's TOC inverted, in whatever
    /// body holds it (a range, a whole package): what a sync must never install.
    case alteredUnverified = "unchecked file's byte inverted"
    /// Order of declaration, for the report.
    public static func < (lhs: SoakFault, rhs: SoakFault) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// True for the faults that cost wall-clock time (at most one per run, so runs stay short).
    var isSlow: Bool { self == .stall || self == .trickle }

    /// The exit statuses SPEC section 7 allows a run that met this fault (and no signal).
    /// A run's allowed set is the union over its faults; a run without any must exit 0.
    var allowedStatuses: Set<Int32> {
        switch self {
        // Transient: retried (resuming), so the run succeeds, or fails (2) once retries run out.
        case .drop, .stall, .serverError: return [0, 2]
        // Slow but never silent for an idle timeout: nothing to fail.
        case .trickle: return [0]
        // 4xx is not retried (2); on a delta's request the full download may still succeed.
        case .notFound: return [0, 2]
        // A body longer than expected is cut off and refused, with or without a length.
        case .overlongWithLength, .overlongWithoutLength: return [1]
        // The extra bytes lie past the message's Content-Length: they are not the body.
        case .overlongPastLength: return [0]
        // Fewer bytes than the entry's size: resumed, refused, or failed once retries run out.
        case .shortWithLength, .shortWithoutLength, .wrongContentRange: return [0, 1, 2]
        // A server that ignores Range is served by one plain full download.
        case .wholeForRange: return [0]
        // Not a catalog: `invalid-catalog`, refused as a whole.
        case .truncatedCatalog, .htmlCatalog: return [1]
        // Bytes that are not the published ones: refused, or (a delta's range) the package
        // downloaded whole instead; never installed, which the record check sees.
        case .alteredRangeStart, .alteredRange, .alteredUnverified: return [0, 1]
        // The whole package is checked against the catalog's sha256.
        case .alteredBody: return [1]
        }
    }

    /// The faults that fit a request for the catalog, a package, or a package's range.
    static func candidates(catalog: Bool, ranged: Bool) -> [(SoakFault, Double)] {
        if catalog {
            return [(.drop, 3), (.stall, 1), (.trickle, 1), (.overlongWithLength, 1), (.overlongWithoutLength, 1),
                    (.serverError, 2), (.notFound, 0.7), (.truncatedCatalog, 1.5), (.htmlCatalog, 1.5)]
        }
        var kinds: [(SoakFault, Double)] = [
            (.drop, 3), (.stall, 1), (.trickle, 1), (.overlongWithLength, 1), (.overlongWithoutLength, 1.5),
            (.overlongPastLength, 0.5), (.shortWithLength, 1), (.shortWithoutLength, 1), (.serverError, 2), (.notFound, 0.7),
        ]
        kinds += ranged ? [(.wholeForRange, 1.5), (.wrongContentRange, 1.5), (.alteredRangeStart, 2.5), (.alteredRange, 1.5)]
                        : [(.alteredBody, 1)]
        return kinds
    }

    /// The server's fault that produces this kind for a body of `length` bytes, its details
    /// (offsets, sizes, rates) drawn from `random`.
    func serverFault(bodyLength length: Int, using random: inout SeededRandom) -> FaultHTTPServer.Fault {
        // An offset inside the body (0: only the head is sent).
        let offset = length > 0 ? Int.random(in: 0..<length, using: &random) : 0
        switch self {
        case .drop: return .dropAfter(bytes: offset)
        case .stall: return .stallAfter(bytes: offset)
        case .trickle:
            return .trickle(piece: Int.random(in: 256...4096, using: &random), interval: Double.random(in: 0.02...0.25, using: &random),
                            duration: Double.random(in: 0.3...2, using: &random))
        case .overlongWithLength, .overlongWithoutLength, .overlongPastLength:
            // Small excesses, and the several megabytes with which issue 19's hang appears.
            let extra = random.chance(0.5) ? Int.random(in: 1...65_536, using: &random)
                                           : Int.random(in: 2_000_000...6_000_000, using: &random)
            let length: FaultHTTPServer.LongBodyLength =
                self == .overlongWithLength ? .includingExtra : self == .overlongWithoutLength ? .absent : .honest
            return .longBody(extra: extra, contentLength: length)
        case .shortWithLength, .shortWithoutLength:
            return .shortBody(missing: Int.random(in: 1...max(1, length), using: &random),
                              contentLength: self == .shortWithLength ? .sent : .absent)
        case .serverError: return .status([500, 502, 503].randomElement(using: &random)!)
        case .notFound: return .status(404)
        case .wholeForRange: return .ignoreRange
        case .wrongContentRange: return .wrongContentRange(shift: Int.random(in: 1...max(1, length), using: &random))
        case .truncatedCatalog:
            return .shortBody(missing: Int.random(in: 1...max(1, length - 1), using: &random),
                              contentLength: random.chance(0.5) ? .sent : .absent)
        case .htmlCatalog: return .htmlInsteadOfFile
        case .alteredRangeStart: return .invertByte(at: 0)
        case .alteredRange, .alteredBody, .alteredUnverified: return .invertByte(at: offset)
        }
    }
}

/// One fault as it was served, for the report of a run that broke an invariant.
public struct ServedFault: Sendable, CustomStringConvertible {
    /// The kind.
    public var kind: SoakFault
    /// The request it answered: path and Range header.
    public var request: String
    /// The server's fault, with its details.
    public var fault: FaultHTTPServer.Fault

    /// `kind on GET path [range]: details`.
    public var description: String { "\(kind.rawValue) on GET \(request): \(fault)" }
}

/// The faults of one run: whether the run is faulty at all, and a budget (at most a few faults,
/// at most one slow one), so that every run can still make progress and ends within its bound.
/// The server asks it once per request, from the request's thread.
final class SoakFaultPlan: @unchecked Sendable {
    // Unchecked: `random`, `budget`, `slowLeft` and `served` are touched only under `lock`.
    private let lock = NSLock()
    private var random: SeededRandom
    private var budget: Int
    private var slowLeft: Int
    private var served: [ServedFault] = []
    private var behaved = 0
    private let catalogRate: Double
    private let packageRate: Double
    /// Issue 38's server, in some runs: it inverts the first byte of every file without a
    /// checksum in every body it serves that holds it, besides the budget.
    private let altersUnverified: Bool
    /// Where such files' data starts, by package path.
    private let unverifiedData: [String: [Int]]

    /// A plan drawn from `random`: none when `clean`, else 1 to 3 faults, each request faulted
    /// with a probability drawn for the run.
    init(random: SeededRandom, clean: Bool, unverifiedData: [String: [Int]] = [:]) {
        var random = random
        budget = clean ? 0 : Int.random(in: 1...3, using: &random)
        slowLeft = 1
        catalogRate = Double.random(in: 0.15...0.4, using: &random)
        packageRate = Double.random(in: 0.4...0.8, using: &random)
        altersUnverified = !clean && random.chance(0.35)
        self.unverifiedData = unverifiedData
        self.random = random
    }

    /// The fault for one request, nil to behave.
    func pick(_ request: FaultHTTPServer.Request) -> FaultHTTPServer.Fault? {
        lock.withLock {
            let catalog = request.path.hasSuffix("/catalog.json")
            let package = request.path.hasSuffix(".pkg")
            if altersUnverified, let length = request.bodyLength, let offsets = unverifiedData[request.path] {
                let start = request.range.flatMap { Int($0.dropFirst("bytes=".count).prefix { $0 != "-" }) } ?? 0
                if let offset = offsets.first(where: { $0 >= start && $0 < start + length }) {
                    let fault = FaultHTTPServer.Fault.invertByte(at: offset - start)
                    served.append(ServedFault(kind: .alteredUnverified, request: request.path + (request.range.map { " " + $0 } ?? ""), fault: fault))
                    return fault
                }
            }
            guard budget > 0, catalog || package, let length = request.bodyLength,
                  random.chance(catalog ? catalogRate : packageRate) else {
                behaved += 1
                return nil
            }
            let kinds = SoakFault.candidates(catalog: catalog, ranged: request.range != nil).filter { !$0.0.isSlow || slowLeft > 0 }
            let kind = random.weighted(kinds)
            let fault = kind.serverFault(bodyLength: length, using: &random)
            budget -= 1
            if kind.isSlow { slowLeft -= 1 }
            served.append(ServedFault(kind: kind, request: request.path + (request.range.map { " " + $0 } ?? ""), fault: fault))
            return fault
        }
    }

    /// The faults served so far, in order, and the number of requests answered without one.
    var outcome: (served: [ServedFault], behaved: Int) { lock.withLock { (served, behaved) } }
}
