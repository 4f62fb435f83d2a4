import Crypto
import Foundation
import PkgKitSupport
import PkgKitDiagnostics
import PkgKitFormat

/// Reads a package once, start to end, and turns it into `PackageFacts`.
///
/// Sizes are counted from the bytes actually read, never from what the container declares,
/// and reading stops as soon as the total passes the size limit, so a decompression bomb
/// costs at most the limit plus one buffer.
public struct PackageScanner {
    /// How much of each file to read.
    public enum Depth: Sendable {
        /// Every byte: checksums verified, sizes counted, sha1 computed (validate, extract).
        case full
        /// Only the first bytes, for executable detection; sizes come from the reader.
        case head
        /// No data but ContentInfo.plist's: sizes as the container declares them (inspect without
        /// --files; create, which looks for executable code with `ExecutableScan` on every core).
        case headers
    }

    /// The bounds in force.
    public var limits: PackageLimits
    /// How much of each file to read.
    public var depth: Depth
    /// Whether to compute each file's sha1 (for diff, extract and `content-unchanged`); reading
    /// in full verifies the container's own checksums either way.
    public var digests: Bool
    /// Called as reading advances with the input bytes read and the input's total size.
    public var progress: ((Int64, Int64) -> Void)?
    /// Checked between entries and between chunks: once set, scanning throws `OperationCancelled`.
    public var cancellation: Cancellation?
    /// The files whose data the reader withholds, by their path: the caller has their bytes.
    package var supplied: [ArchivePath: SuppliedFile] = [:]

    package static let bufferSize = 1 << 20

    public init(limits: PackageLimits = PackageLimits(), depth: Depth = .full, digests: Bool = true,
                progress: ((Int64, Int64) -> Void)? = nil) {
        self.limits = limits
        self.depth = depth
        self.digests = digests
        self.progress = progress
    }

    /// Scans everything `reader` yields. Read failures become diagnostics in the facts; only
    /// I/O errors on the input itself are thrown.
    /// With a `sink`, every entry and every byte read is also handed to it (depth must be `.full`).
    public func scan(_ reader: PackageReader, into facts: inout PackageFacts, sink: EntrySink? = nil) throws {
        precondition(sink == nil || depth == .full, "a sink needs every byte")
        // The format is known for sure only once the first header has been read.
        // (An empty reader stands for input that is no readable package: the opener said what it was.)
        defer { if !(reader is EmptyReader) { facts.format = reader.format } }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        var totalRead: Int64 = 0
        if let expected = reader.expectedEntryCount {
            facts.entries.reserveCapacity(facts.entries.count + min(expected, limits.maxEntries))
        }
        // A reader that can works ahead on other threads. When nothing but the checks is wanted
        // (no sink, no digests of our own), it keeps only each file's first bytes.
        var verifier: ReadAheadReader?
        if depth == .full, let ahead = reader as? ReadAheadReader {
            if sink == nil && !digests {
                if ahead.startReadAhead(.verify) { verifier = ahead }
            } else {
                _ = ahead.startReadAhead(.deliver)
            }
        }
        do {
            while let entry = try reader.nextEntry() {
                try cancellation?.check()
                if entry.path.isRoot && entry.kind == .directory { continue }
                guard facts.entries.count < limits.maxEntries else {
                    facts.readFailures.append(Diagnostic(.unreadableArchive, path: nil,
                        "the package has more than \(limits.maxEntries) entries: split the content into several products"))
                    return
                }
                var fact = EntryFacts(path: entry.path, pathProblem: PathSafety.problem(with: entry.path.bytes), kind: entry.kind, mode: entry.mode & 0o7777,
                                      size: 0, linkTarget: entry.linkTarget, hardlinkTarget: entry.hardlinkTarget)
                try sink?.begin(entry)
                // Every path below appends the file's facts at this position.
                if entry.kind == .file, let chunks = entry.chunks { facts.chunkTables.append((facts.entries.count, chunks)) }
                if entry.kind == .file, entry.dataWithheld {
                    // Its bytes are a file the caller has, found equal to the package's checksum;
                    // the sink takes them from there.
                    guard let known = supplied[entry.path] else {
                        throw ReadError.unreadable(path: entry.path.description, "its data was withheld and nothing supplies it")
                    }
                    fact.size = known.size
                    fact.digest = known.sha1
                    fact.executable = known.executable
                    totalRead += known.size
                    try sink?.end()
                    facts.entries.append(fact)
                    if totalRead > limits.maxSize {
                        facts.stoppedAtSizeLimit = true
                        return
                    }
                } else if entry.kind == .file {
                    if let declared = entry.declaredSize, declared > limits.maxSize {
                        fact.size = declared
                        facts.entries.append(fact)
                        facts.stoppedAtSizeLimit = true
                        return
                    }
                    let isContentInfo = entry.path.string == ContentInfo.fileName
                    let outcome = try verifier.map {
                        try verifyData(from: $0, progressFrom: reader, buffer: buffer, totalRead: &totalRead, keepAll: isContentInfo, fact: &fact)
                    } ?? readData(of: entry, from: reader, buffer: buffer, totalRead: &totalRead,
                                  keepAll: isContentInfo, fact: &fact, sink: sink)
                    try sink?.end()
                    if isContentInfo {
                        if outcome.kept.count > PackageLimits.maxContentInfoBytes || outcome.keptOverflow {
                            facts.contentInfoTooLarge = true
                        } else if facts.contentInfoData == nil {
                            facts.contentInfoData = Data(outcome.kept)
                        }
                    }
                    facts.entries.append(fact)
                    if let failure = outcome.checksumFailure {
                        facts.readFailures.append(Diagnostic(.checksumMismatch, path: entry.path.description,
                            "\(failure): the file's data does not match its checksum; rebuild the package"))
                    }
                    if outcome.passedLimit {
                        facts.stoppedAtSizeLimit = true
                        return
                    }
                    // ContentInfo.plist is not payload (docs/format.md): its own bound is
                    // `maxContentInfoBytes`, so only while it is read does it count here.
                    if isContentInfo { totalRead -= fact.size }
                } else {
                    try sink?.end()
                    facts.entries.append(fact)
                }
            }
        } catch let error as ReadError {
            facts.stoppedEarly = true
            // The input itself failing is not a finding about the package.
            if case .io = error { throw error }
            facts.readFailures.append(error.diagnostic)
        }
    }

    private struct ReadOutcome {
        var kept: [UInt8] = []
        var keptOverflow = false
        var passedLimit = false
        var checksumFailure: String?
    }

    /// Checks a file's data through a reader working ahead, taking back only its first bytes.
    private func verifyData(from reader: ReadAheadReader, progressFrom source: PackageReader, buffer: UnsafeMutableRawBufferPointer,
                            totalRead: inout Int64, keepAll: Bool, fact: inout EntryFacts) throws -> ReadOutcome {
        var outcome = ReadOutcome()
        let maxKept = PackageLimits.maxContentInfoBytes
        let wanted = min(buffer.count, keepAll ? maxKept : ExecutableFormat.headBytes)
        let result = try reader.verifyData(head: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]))
        let head = UnsafeRawBufferPointer(rebasing: buffer[0..<result.headCount])
        fact.executable = ExecutableFormat.detect(UnsafeRawBufferPointer(rebasing: head.prefix(ExecutableFormat.headBytes)))
        fact.size = result.size
        totalRead += result.size
        if keepAll {
            outcome.kept = Array(head)
            outcome.keptOverflow = result.size > Int64(maxKept)
        }
        if case .checksumMismatch(_, let message)? = result.failure { outcome.checksumFailure = message }
        if let progress {
            let position = source.progress
            progress(position.done, position.total)
        }
        outcome.passedLimit = totalRead > limits.maxSize
        return outcome
    }

    private func readData(of entry: ArchiveEntry, from reader: PackageReader, buffer: UnsafeMutableRawBufferPointer,
                          totalRead: inout Int64, keepAll: Bool, fact: inout EntryFacts, sink: EntrySink?) throws -> ReadOutcome {
        var outcome = ReadOutcome()
        var head: [UInt8] = []
        // A digest the reader checks the data against is the data's sha1 once reading succeeds:
        // kept even when digests are not asked for, since it costs nothing (an install records it
        // in its stat cache).
        let declared = depth == .full ? reader.declaredSHA1 : nil
        var hasher = depth == .full && digests && declared == nil ? Insecure.SHA1() : nil
        var size: Int64 = 0
        let headLimit = ExecutableFormat.headBytes
        let maxKept = PackageLimits.maxContentInfoBytes
        while true {
            let wanted: Int
            switch depth {
            case .full: wanted = buffer.count
            case .head: wanted = keepAll ? buffer.count : min(buffer.count, headLimit - head.count)
            case .headers: wanted = keepAll ? buffer.count : 0
            }
            if wanted == 0 { break }
            let count: Int
            do {
                count = try reader.readData(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]))
            } catch ReadError.checksumMismatch(_, let message) {
                // The entry's bytes are wrong but the archive goes on: record it and read on.
                outcome.checksumFailure = message
                break
            }
            if count == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            size += Int64(count)
            totalRead += Int64(count)
            if head.count < headLimit { head.append(contentsOf: chunk.prefix(headLimit - head.count)) }
            if keepAll {
                if outcome.kept.count + count <= maxKept { outcome.kept.append(contentsOf: chunk) } else { outcome.keptOverflow = true }
            }
            hasher?.update(bufferPointer: chunk)
            try sink?.write(chunk)
            try cancellation?.check()
            if let progress {
                let position = reader.progress
                progress(position.done, position.total)
            }
            if totalRead > limits.maxSize {
                outcome.passedLimit = true
                break
            }
        }
        fact.executable = ExecutableFormat.detect(head)
        if depth != .full, let declared = entry.declaredSize {
            fact.size = declared
        } else {
            fact.size = size
        }
        if let digest = hasher?.finalize() { fact.digest = SHA1Value(digest) }
        if let declared, outcome.checksumFailure == nil, !outcome.passedLimit { fact.sha1 = declared }
        return outcome
    }
}
