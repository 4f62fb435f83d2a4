import PkgKitDiagnostics
import PkgKitFormat

/// Resolves symbolic links lexically, through chains of links inside the package, without
/// touching the file system: the facts behind `symlink-escape` and `dangling-symlink`.
///
/// On a device `Contents/` becomes the version folder, so a path that climbs above
/// `Contents` at any step has left the content, even if a later `Contents/..` comes back.
struct LinkResolver {
    /// Where a link leads.
    package enum Outcome: Equatable {
        /// To an entry inside `Contents/`.
        case inside
        /// Outside `Contents/` (absolute target, too many `..`, or a chain leaving it).
        case escapes
        /// Around in a circle (or a chain longer than `maxHops`).
        case loop
        /// To a path inside `Contents/` that the package does not hold.
        case dangling
    }

    private var links: [String: [UInt8]] = [:]
    private var paths: Set<String> = []
    /// Longest chain followed before calling it a loop (Linux's own limit is 40).
    static let maxHops = 40

    package init(_ package: PackageFacts) {
        // Only links need resolving: without any, no table of every path is built.
        guard package.entries.contains(where: { $0.kind == .symlink }) else { return }
        for entry in package.entries {
            paths.insert(entry.path.string)
            if entry.kind == .symlink, let target = entry.linkTarget { links[entry.path.string] = target }
        }
    }

    /// Follows the link at `path` (a package path inside `Contents/`) to its end.
    package func resolve(_ path: String) -> Outcome {
        guard let first = links[path] else { return .inside }
        var stack = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().map(String.init)
        var queue = Self.components(first)[...]
        if first.first == UInt8(ascii: "/") { return .escapes }
        var hops = 1
        while let component = queue.popFirst() {
            if component == "." || component.isEmpty { continue }
            if component == ".." {
                stack.removeLast()
                if stack.isEmpty { return .escapes }
                continue
            }
            stack.append(component)
            if let target = links[stack.joined(separator: "/")] {
                hops += 1
                if hops > Self.maxHops { return .loop }
                if target.first == UInt8(ascii: "/") { return .escapes }
                stack.removeLast()
                queue = (Self.components(target) + queue)[...]
            }
        }
        if stack == ["Contents"] { return .inside }
        return paths.contains(stack.joined(separator: "/")) ? .inside : .dangling
    }

    private static func components(_ target: [UInt8]) -> [String] {
        String(decoding: target, as: UTF8.self).split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }
}
