import Foundation
import PkgKitSupport
import PkgKitFormat

/// Looks for executable code in the files `create` is about to pack, by their first bytes, on
/// several threads at once, while the folder walk that finds them goes on.
///
/// It is the part of `create`'s check that needs the files' data, and on many small files the
/// time goes to opening them: one file after another, that would be the largest single piece of
/// `create`'s check, so the files are opened on every core at once. And they are opened as the
/// walk lists them (`add`), not after it: the walk keeps one core busy with the folders, and the
/// other cores would otherwise wait for it (a third of `create`'s check on a copy of `/usr/share`).
///
/// `add` and `finish` are called from one thread, the one walking.
package final class ExecutableScan {
    /// How many files one thread takes at a time.
    package static let blockSize = 256
    /// Bytes read from every file: one page, which tells every format apart; reading
    /// `ExecutableFormat.headBytes` of each would double what `create` reads of small files.
    package static let firstRead = 4096

    private let jobs: Int
    private let blocks = Blocks()
    private let workers = DispatchGroup()
    /// Files added since the last block was handed over.
    private var pending: [SourceItem] = []
    private var handedOver = 0

    /// A scan on `jobs` threads; with one, every block is read by the thread adding it.
    package init(jobs: Int) {
        self.jobs = max(1, jobs)
        guard self.jobs > 1 else { return }
        for _ in 0..<self.jobs {
            workers.enter()
            Thread.detachNewThread { [blocks, workers] in
                defer { workers.leave() }
                while let (block, files) = blocks.take() { blocks.record(block, Self.read(files)) }
            }
        }
    }

    /// A scan left unfinished (its walk failed): the blocks not yet taken are dropped, and the
    /// threads are waited for.
    deinit {
        blocks.close(dropping: true)
        workers.wait()
    }

    /// Looks at the files among `items`, in the order given; other kinds are passed over.
    package func add<Items: Sequence<SourceItem>>(_ items: Items) {
        for item in items where item.kind == .file {
            pending.append(item)
            if pending.count == Self.blockSize { handOver() }
        }
    }

    /// Waits for every file added, and returns the formats found, by path (a path added twice
    /// keeps its first); plain content is absent. Throws the error of the first file added that
    /// could not be read, as reading them one by one in that order would.
    package func finish() throws -> [ArchivePath: ExecutableFormat] {
        if !pending.isEmpty { handOver() }
        blocks.close(dropping: false)
        workers.wait()
        return try blocks.formats()
    }

    private func handOver() {
        let files = pending
        pending = []
        let block = handedOver
        handedOver += 1
        if jobs == 1 {
            blocks.record(block, Self.read(files))
        } else {
            blocks.give(block, files)
        }
    }

    /// The blocks handed over and what each found, behind one lock.
    private final class Blocks: Sendable {
        /// The blocks waiting to be read, and what the read ones found.
        private struct State {
            /// Blocks handed over and not yet taken.
            var waiting: [(block: Int, files: [SourceItem])] = []
            /// True once no more blocks come.
            var closed = false
            /// What each block found: formats in the block's order, and the error of its first
            /// file that could not be read (which ends the block).
            var found: [Int: [(path: ArchivePath, format: ExecutableFormat)]] = [:]
            /// The failure that ended each block, if any.
            var failures: [Int: any Error] = [:]
        }
        private let state = ConditionLockedValue(State())

        func give(_ block: Int, _ files: [SourceItem]) {
            state.withLock(thenWake: .one) { $0.waiting.append((block, files)) }
        }

        /// The next block to read; nil once the scan is closed and nothing waits.
        func take() -> (Int, [SourceItem])? {
            state.withLock(waitingUntil: { !$0.waiting.isEmpty || $0.closed }) { state in
                state.waiting.isEmpty ? nil : state.waiting.removeFirst()
            }
        }

        func close(dropping: Bool) {
            state.withLock(thenWake: .all) { state in
                state.closed = true
                if dropping { state.waiting.removeAll() }
            }
        }

        func record(_ block: Int, _ result: (formats: [(ArchivePath, ExecutableFormat)], failure: (any Error)?)) {
            state.withLock { state in
                if !result.formats.isEmpty { state.found[block] = result.formats }
                if let failure = result.failure { state.failures[block] = failure }
            }
        }

        /// Every block's formats in the order added, or the first block's failure.
        func formats() throws -> [ArchivePath: ExecutableFormat] {
            try state.withLock { state in
                if let first = state.failures.keys.min() { throw state.failures[first]! }
                var formats: [ArchivePath: ExecutableFormat] = [:]
                for block in state.found.keys.sorted() {
                    for (path, format) in state.found[block]! where formats[path] == nil { formats[path] = format }
                }
                return formats
            }
        }
    }

    /// One block's formats, up to its first file that cannot be read.
    private static func read(_ files: [SourceItem]) -> (formats: [(ArchivePath, ExecutableFormat)], failure: (any Error)?) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ExecutableFormat.headBytes, alignment: 16)
        defer { buffer.deallocate() }
        var formats: [(ArchivePath, ExecutableFormat)] = []
        let opener = SourceFileOpener()
        do {
            for file in files {
                if let format = try detect(file, buffer: buffer, opener: opener) { formats.append((file.path, format)) }
            }
            return (formats, nil)
        } catch {
            return (formats, error)
        }
    }

    /// One file's format, from its first `ExecutableFormat.headBytes` bytes.
    private static func detect(_ item: SourceItem, buffer: UnsafeMutableRawBufferPointer, opener: SourceFileOpener) throws -> ExecutableFormat? {
        switch item.origin {
        case .data(let bytes):
            return bytes.withUnsafeBytes { ExecutableFormat.detect(UnsafeRawBufferPointer(rebasing: $0.prefix(ExecutableFormat.headBytes))) }
        case .file, .walked:
            let path = item.sourcePath ?? []
            let descriptor = opener.open(path)
            guard descriptor >= 0 else { throw ReadError.io(path: String(decoding: path, as: UTF8.self), errnoText()) }
            defer { close(descriptor) }
            // Every format shows in the first bytes, but a PE header may lie up to `headBytes` in:
            // only a file starting "MZ" is read further.
            var count = readFully(descriptor, UnsafeMutableRawBufferPointer(rebasing: buffer[0..<firstRead]), at: 0)
            if count == firstRead, buffer[0] == UInt8(ascii: "M"), buffer[1] == UInt8(ascii: "Z") {
                let rest = readFully(descriptor, UnsafeMutableRawBufferPointer(rebasing: buffer[firstRead...]), at: Int64(firstRead))
                count = rest < 0 ? rest : count + rest
            }
            guard count >= 0 else { throw ReadError.io(path: String(decoding: path, as: UTF8.self), errnoText()) }
            return ExecutableFormat.detect(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        case .none:
            return nil
        }
    }
}
