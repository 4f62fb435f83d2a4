#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file that appears at its final path whole or not at all: written under a temporary name in
/// the same folder, flushed, then renamed over the destination (which stays intact until then).
final class AtomicFile {
    /// The destination.
    let destination: String
    /// The output being written.
    let output: FileOutput
    private let temporaryPath: String
    private var committed = false

    /// Creates the temporary file next to `destination`.
    init(destination: String) throws {
        self.destination = destination
        let directory = AtomicFile.directory(of: destination)
        let base = destination.split(separator: "/").last.map(String.init) ?? destination
        var template = Array((directory + "/." + base + ".tmp-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw WriteError.io(path: destination, "cannot write in \(directory): \(errnoText())") }
        temporaryPath = String(cString: template)
        fchmod(fd, 0o644)
        output = FileOutput(descriptor: fd, path: destination)
    }

    deinit {
        if !committed { unlink(temporaryPath) }
    }

    /// Flushes, renames into place and flushes the folder, so the new file survives a crash.
    func commit() throws {
        try output.sync()
        guard rename(temporaryPath, destination) == 0 else { throw WriteError.io(path: destination, errnoText()) }
        committed = true
        let folder = open(AtomicFile.directory(of: destination), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }

    /// Removes the temporary file now (also done on deinit).
    func discard() {
        if !committed { unlink(temporaryPath) }
        committed = true
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }
}
