import Foundation
import PkgKitFormat
import PkgKitChecking

/// Writes the staging folder on several threads at once ("lanes"), each a `StagingWriter` behind
/// its own `BackgroundSink`. Creating a file takes its folder's lock in the kernel, so the lanes
/// are given whole folders: every entry of one folder goes to the same lane, and folders are dealt
/// out to the lanes in turn as they first appear. On 100,000 small files, where creating inodes is
/// most of an install, two lanes fill two folders at a time.
///
/// The lanes share nothing but the staging folder itself: each opens folders on its own (making
/// a missing one is harmless when another lane made it first). Hard links are linked after every
/// lane has written all its files.
final class StagingLanes: EntrySink {
    private let writers: [StagingWriter]
    private let lanes: [BackgroundSink]
    /// Which lane a folder's entries go to, by the folder's path.
    private var laneOfFolder: [ArraySlice<UInt8>: Int] = [:]
    private var nextLane = 0
    private var current: BackgroundSink?
    private var currentIsFile = false
    private var filesStaged = 0
    /// Told the number of files staged so far, after each one.
    var onFile: ((Int) -> Void)?

    /// One lane per core (at most `maxLanes`), sharing `BackgroundSink.maxQueuedBytes` between them.
    static var laneCount: Int { max(1, min(ProcessInfo.processInfo.activeProcessorCount, 4)) }

    /// Creates the staging folder `name` in the product folder and starts `count` lanes on it.
    /// `reused` are the files on hand in the product folder whose data the reader withholds.
    package init(product: Int32, name: String, productPath: String, reused: [ArchivePath: InstalledFile] = [:],
                 count: Int = StagingLanes.laneCount) throws {
        var writers = [try StagingWriter(product: product, name: name, productPath: productPath, reused: reused)]
        for _ in 1..<max(1, count) {
            writers.append(try StagingWriter(product: product, name: name, productPath: productPath, reused: reused, create: false,
                                             flusher: writers[0].flusher, linked: writers[0].linked))
        }
        self.writers = writers
        let share = BackgroundSink.maxQueuedBytes / writers.count
        lanes = writers.map { BackgroundSink($0, maxQueuedBytes: share) }
    }

    package func begin(_ entry: ArchiveEntry) throws {
        // A folder's own entry goes where its contents will; anything else where its folder's do.
        let bytes = entry.path.bytes
        let folder = entry.kind == .directory ? bytes[...] : bytes[..<(bytes.lastIndex(of: UInt8(ascii: "/")) ?? 0)]
        let lane: Int
        if let known = laneOfFolder[folder] {
            lane = known
        } else {
            lane = nextLane
            nextLane = (nextLane + 1) % lanes.count
            laneOfFolder[folder] = lane
        }
        current = lanes[lane]
        // What an app shows as files installed: the version folder's files (the report's
        // fileCount), not the package's ContentInfo.plist.
        currentIsFile = entry.kind == .file && entry.path.isInsideContents
        try lanes[lane].begin(entry)
    }

    package func write(_ chunk: UnsafeRawBufferPointer) throws {
        try current?.write(chunk)
    }

    package func end() throws {
        try current?.end()
        if currentIsFile {
            filesStaged += 1
            onFile?(filesStaged)
        }
    }

    /// Waits for every lane to finish (or fail); rethrows the first failure.
    package func drain() throws {
        var failure: Error?
        for lane in lanes {
            do { try lane.drain() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    /// After `drain`: links the hard links and makes everything durable at once.
    package func finish() throws {
        for writer in writers { try writer.linkHardlinks() }
        try writers[0].sync()
    }
}
