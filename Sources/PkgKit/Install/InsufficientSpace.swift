import PkgKitSupport
import PkgKitFormat
import PkgKitChecking
import PkgKitReports
import PkgKitDiagnostics

/// The file system holding a product folder has no room for what an install or a sync would
/// write: found before anything is written (or downloaded), so that an app can say "needs
/// 136 MB, 19 MB free" instead of filling the disk and failing part-way.
public struct InsufficientSpace: DiagnosableError, Sendable, Equatable {
    /// The folder whose file system was asked (the product folder, or the Documents folder).
    public var path: String
    /// What would be written: `com.x 1.1`.
    public var subject: String
    /// Bytes the work would write.
    public var needed: Int64
    /// Bytes the file system has free.
    public var free: Int64
    /// What `needed` is made of, in words (`a 34.2 MB download, 102.5 MB unpacked`).
    public var breakdown: String
    /// What was left undone: `nothing was downloaded`, `nothing was written`.
    public var untouched: String

    public var diagnostic: Diagnostic {
        Diagnostic(.insufficientSpace, path: path,
                   "\(subject) needs \(ByteSize.human(needed)) (\(breakdown)), \(ByteSize.human(free)) free: \(FreeSpace.fullDiskAdvice); \(untouched)")
    }

    public var disposition: ErrorDisposition { .failed }

    /// Throws when `needed` bytes are more than `freeSpace` says the file system of `path` has;
    /// a system that cannot say lets the work go on (its writes report a full disk).
    package static func check(_ needed: Int64, at path: String, freeSpace: FreeSpace, subject: String, breakdown: String,
                              untouched: String) throws {
        guard needed > 0, let free = freeSpace.available(path), free < needed else { return }
        throw InsufficientSpace(path: path, subject: subject, needed: needed, free: free, breakdown: breakdown, untouched: untouched)
    }
}
