#if os(Linux)
internal import CSyscalls
#endif
import Foundation
import PkgKitSupport

/// A file that appears at its final path whole or not at all.
///
/// On Linux the data goes to an unnamed file (`O_TMPFILE`) in the destination's folder, which a
/// killed process cannot leave behind; at commit it is flushed, given a temporary name and
/// renamed over the destination, which stays intact until that instant. Elsewhere a hidden
/// temporary file plays the unnamed file's part.
package final class AtomicFile {
    /// The destination.
    package let destination: String
    /// The output being written.
    package let output: FileOutput
    private var temporaryPath: String?
    private var committed = false

    // Foundation's mode_t: CSyscalls declares one too, imported for this file's use only.
    /// Opens the file next to `destination`; it will have `mode` (whatever the umask).
    package init(destination: String, mode: Foundation.mode_t = 0o644) throws {
        self.destination = destination
        let directory = AtomicFile.directory(of: destination)
        #if os(Linux)
        let unnamed = open(directory, CSyscalls_O_TMPFILE | O_RDWR | O_CLOEXEC, mode)
        if unnamed >= 0 {
            fchmod(unnamed, mode)
            output = FileOutput(descriptor: unnamed, path: destination)
            return
        }
        #endif
        let path = try AtomicFile.temporaryName(for: destination)
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw WriteError.io(path: destination, "cannot write in \(directory): \(errnoText())") }
        fchmod(fd, mode)
        temporaryPath = path
        output = FileOutput(descriptor: fd, path: destination)
    }

    deinit { discard() }

    /// Flushes and links the file into place only if `destination` does not exist; returns false
    /// (and discards the file) when it does. Never replaces anything.
    package func commitNew() throws -> Bool {
        try output.flushToDevice()
        let source = temporaryPath ?? "/proc/self/fd/\(output.descriptor)"
        guard linkat(AT_FDCWD, source, AT_FDCWD, destination, temporaryPath == nil ? AT_SYMLINK_FOLLOW : 0) == 0 else {
            if errno == EEXIST {
                discard()
                return false
            }
            throw WriteError.io(path: destination, errnoText())
        }
        discard()   // removes the temporary name, if any; the destination stays
        flushFolder()
        return true
    }

    /// Flushes, renames into place and flushes the folder, so the new file survives a crash.
    package func commit() throws {
        try output.flushToDevice()
        let named: String
        if let temporaryPath {
            named = temporaryPath
        } else {
            // Give the unnamed file a name only now, when it is complete.
            named = try AtomicFile.temporaryName(for: destination)
            let link = "/proc/self/fd/\(output.descriptor)"
            guard linkat(AT_FDCWD, link, AT_FDCWD, named, AT_SYMLINK_FOLLOW) == 0 else {
                throw WriteError.io(path: destination, errnoText())
            }
            temporaryPath = named
        }
        guard rename(named, destination) == 0 else { throw WriteError.io(path: destination, errnoText()) }
        committed = true
        flushFolder()
    }

    private func flushFolder() {
        let folder = open(AtomicFile.directory(of: destination), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }

    /// Gives up: removes any named temporary file. The destination is untouched.
    package func discard() {
        if !committed, let temporaryPath { unlink(temporaryPath) }
        committed = true
    }

    /// The folder part of a path.
    package static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }

    private static func temporaryName(for destination: String) throws -> String {
        let base = destination.split(separator: "/").last.map(String.init) ?? destination
        var random = SystemRandomNumberGenerator()
        let suffix = String(random.next() % 0xFFFF_FFFF, radix: 16)
        return directory(of: destination) + "/." + base + ".tmp-" + suffix
    }
}
