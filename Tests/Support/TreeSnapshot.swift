import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One entry of a folder tree, as tests compare installs: never following links.
public enum TreeEntry: Equatable, Sendable {
    case folder
    case file(Data)
    case link(String)
    case other
}

/// Every path below `root` (relative, `/`-separated) with its bytes, link target or kind.
public func snapshot(_ root: String) -> [String: TreeEntry] {
    var result: [String: TreeEntry] = [:]
    func walk(_ dir: String, _ prefix: String) {
        for name in names(dir) {
            let full = dir + "/" + name, relative = prefix + name
            var info = stat()
            guard lstat(full, &info) == 0 else { result[relative] = .other; continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                result[relative] = .folder
                walk(full, relative + "/")
            case S_IFREG:
                result[relative] = .file((try? Data(contentsOf: URL(fileURLWithPath: full))) ?? Data("<unreadable>".utf8))
            case S_IFLNK:
                result[relative] = .link((try? FileManager.default.destinationOfSymbolicLink(atPath: full)) ?? "")
            default:
                result[relative] = .other
            }
        }
    }
    walk(root, "")
    return result
}

/// What differs between a folder and the expected tree, as readable lines (empty when
/// byte-identical).
public func differences(_ folder: String, expected: [String: TreeEntry]) -> [String] {
    var isDir: ObjCBool = false
    guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
        return ["\(folder) is missing"]
    }
    let actual = snapshot(folder)
    var problems: [String] = []
    for (path, entry) in expected.sorted(by: { $0.key < $1.key }) {
        guard let found = actual[path] else { problems.append("missing \(path)"); continue }
        if found != entry {
            if case .file(let want) = entry, case .file(let got) = found {
                problems.append("\(path): \(got.count) bytes, expected \(want.count) (or different bytes)")
            } else {
                problems.append("\(path): wrong kind")
            }
        }
    }
    for path in actual.keys.sorted() where expected[path] == nil { problems.append("unexpected \(path)") }
    return Array(problems.prefix(10)) + (problems.count > 10 ? ["… \(problems.count - 10) more"] : [])
}
