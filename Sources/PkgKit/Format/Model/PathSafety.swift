
/// Decides whether an archive path is safe to install: the checks behind `unsafe-path`.
public enum PathSafety {
    /// Why `raw` is unsafe, in words for a diagnostic; nil when it is safe.
    ///
    /// `raw` is the path as the container stored it, before `./` stripping, so that an
    /// absolute or `..` path is never normalised into an innocent one.
    public static func problem(with raw: [UInt8]) -> String? {
        if raw.first == UInt8(ascii: "/") { return "absolute path: store paths relative to the package root" }
        if raw.count > PackageLimits.maxPathBytes {
            return "path is \(raw.count) bytes long: keep paths within \(PackageLimits.maxPathBytes) bytes"
        }
        // One pass over the bytes, and components found by index: a String and an array of
        // slices for every entry add up on packages of many files.
        var nul = false
        var control: UInt8?
        var ascii = true
        for byte in raw {
            if byte == 0 { nul = true }
            if control == nil && (byte < 0x20 || byte == 0x7F) { control = byte }
            if byte >= 0x80 { ascii = false }
        }
        if nul { return "path contains a NUL byte: rename the file" }
        if let control {
            return "path contains control character 0x\(String(control, radix: 16)): rename the file"
        }
        if !ascii && String(validating: raw, as: UTF8.self) == nil {
            return "name is not valid UTF-8: rename the file"
        }
        let normal = ArchivePath(raw: raw).bytes
        if normal.isEmpty { return nil }
        var start = 0
        while start <= normal.count {
            let end = normal[start...].firstIndex(of: UInt8(ascii: "/")) ?? normal.count
            let component = normal[start..<end]
            if component.isEmpty { return "path has an empty component ('//'): remove the extra slash" }
            if component.elementsEqual("..".utf8) { return "path contains '..': store paths inside the package" }
            if component.elementsEqual(".".utf8) { return "path contains a '.' component: store the plain path" }
            if component.count > PackageLimits.maxComponentBytes {
                return "a path component is \(component.count) bytes long: keep names within \(PackageLimits.maxComponentBytes) bytes"
            }
            start = end + 1
        }
        return nil
    }

    /// Whether every component of the relative path `path` is a name: none empty, `.` or `..`.
    /// What an install checks again of every path it writes, whatever the rules judged.
    package static func componentsAreNames(_ path: String) -> Bool {
        var length = 0, dots = 0
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/") {
                if length == 0 || (length == dots && dots <= 2) { return false }
                (length, dots) = (0, 0)
            } else {
                length += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
        }
        return length > 0 && !(length == dots && dots <= 2)
    }
}
