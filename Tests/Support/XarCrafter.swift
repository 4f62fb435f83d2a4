import CZlib
import Crypto
import Foundation

/// Builds xar files by hand, for tests: a 28-byte header, a zlib TOC and a heap whose first
/// 20 bytes are the sha1 of the compressed TOC. Lets tests write what no honest writer would:
/// `..` names, duplicates, lying sizes, wrong checksums, devices, links.
public struct XarCrafter: Sendable {
    /// How a file's data is stored in the heap.
    public enum Encoding: Sendable { case zlib, stored }

    /// One TOC entry. `path` is split on `/` into nested `<file>` elements (missing folders are
    /// added), unless `rawName` is set, in which case the whole path is one `<name>`.
    public struct File: Sendable {
        public var path: String
        public var type: String = "file"
        public var data: [UInt8] = []
        public var encoding: Encoding = .zlib
        public var mode: String = "0644"
        public var linkTarget: String?
        /// `"original"` for a hard-link original, or the original's id for a link.
        public var hardlink: String?
        /// An explicit `<file id>`; otherwise ids follow creation order.
        public var id: Int?
        /// A `<size>` to write instead of the data's real size.
        public var declaredSize: Int?
        /// Leave `<size>` out.
        public var omitSize = false
        /// Write a wrong `<extracted-checksum>`.
        public var corruptChecksum = false
        /// Write a wrong `<archived-checksum>`.
        public var corruptArchivedChecksum = false
        /// Store the (last) name base64-encoded.
        public var nameBase64 = false
        /// Use `path` as a single `<name>`, slashes and all.
        public var rawName = false
        /// Leave both `<archived-checksum>` and `<extracted-checksum>` out, as some writers do.
        public var omitChecksums = false

        public init(path: String, type: String = "file", data: [UInt8] = [], encoding: Encoding = .zlib,
             mode: String? = nil, linkTarget: String? = nil, hardlink: String? = nil, id: Int? = nil,
             declaredSize: Int? = nil, omitSize: Bool = false, corruptChecksum: Bool = false,
             corruptArchivedChecksum: Bool = false, nameBase64: Bool = false, rawName: Bool = false) {
            self.path = path
            self.type = type
            self.data = data
            self.encoding = encoding
            self.mode = mode ?? (type == "directory" || type == "symlink" ? "0755" : "0644")
            self.linkTarget = linkTarget
            self.hardlink = hardlink
            self.id = id
            self.declaredSize = declaredSize
            self.omitSize = omitSize
            self.corruptChecksum = corruptChecksum
            self.corruptArchivedChecksum = corruptArchivedChecksum
            self.nameBase64 = nameBase64
            self.rawName = rawName
        }

        public static func file(_ path: String, _ text: String, mode: String = "0644") -> File {
            File(path: path, data: Array(text.utf8), mode: mode)
        }
        public static func dir(_ path: String) -> File { File(path: path, type: "directory") }
        public static func symlink(_ path: String, _ target: String) -> File { File(path: path, type: "symlink", linkTarget: target) }
    }

    private final class Node {
        var name: String
        var file: File
        var id: Int
        var children: [Node] = []
        init(name: String, file: File, id: Int) { self.name = name; self.file = file; self.id = id }
    }

    public var files: [File]

    public init(_ files: [File]) { self.files = files }

    /// A regular ContentInfo.plist entry.
    public static func contentInfo(version: String = "1.0", id: String = "com.example.book") -> File {
        File(path: "ContentInfo.plist", data: plist(version: version, id: id))
    }

    /// An XML ContentInfo.plist's bytes.
    public static func plist(version: String = "1.0", id: String = "com.example.book") -> [UInt8] {
        Array(TestSupport.plist(id: id, version: version).utf8)
    }

    /// The xar bytes.
    public func build() -> [UInt8] {
        var nextID = 1
        var roots: [Node] = []
        func makeID(_ file: File) -> Int {
            if let id = file.id { return id }
            defer { nextID += 1 }
            return nextID
        }
        for file in files {
            let parts = file.rawName ? [file.path] : file.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            var parent: Node?
            func append(_ node: Node) {
                if let parent { parent.children.append(node) } else { roots.append(node) }
            }
            for part in parts.dropLast() {
                let siblings = parent?.children ?? roots
                if let existing = siblings.first(where: { $0.name == part && $0.file.type == "directory" }) {
                    parent = existing
                } else {
                    let dir = File.dir(part)
                    let node = Node(name: part, file: dir, id: makeID(dir))
                    append(node)
                    parent = node
                }
            }
            let last = parts.last ?? ""
            let siblings = parent?.children ?? roots
            if file.type == "directory", file.hardlink == nil,
               let existing = siblings.first(where: { $0.name == last && $0.file.type == "directory" }) {
                existing.file = file
                existing.id = file.id ?? existing.id
            } else {
                append(Node(name: last, file: file, id: makeID(file)))
            }
        }

        // Heap layout: TOC checksum at 0..20, then each file's stored bytes.
        var heap: [UInt8] = []
        var offset = 20
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xar>\n<toc>\n"
        xml += "<creation-time>1970-01-01T00:00:00</creation-time>\n"
        xml += "<checksum style=\"sha1\"><offset>0</offset><size>20</size></checksum>\n"
        func emit(_ node: Node) {
            let file = node.file
            xml += "<file id=\"\(node.id)\">\n"
            if file.nameBase64 {
                xml += "<name enctype=\"base64\">\(Data(node.name.utf8).base64EncodedString())</name>\n"
            } else {
                xml += "<name>\(escape(node.name))</name>\n"
            }
            if let hardlink = file.hardlink {
                xml += "<type link=\"\(hardlink)\">hardlink</type>\n"
            } else {
                xml += "<type>\(file.type)</type>\n"
            }
            xml += "<mode>\(file.mode)</mode><uid>0</uid><gid>0</gid>\n"
            xml += "<mtime>1970-01-01T00:00:00Z</mtime>\n"
            if let target = file.linkTarget {
                xml += "<link type=\"broken\">\(escape(target))</link>\n"
            }
            let carriesData = (file.type == "file" && file.hardlink == nil) || file.hardlink == "original"
            if carriesData && (!file.data.isEmpty || file.declaredSize != nil) {
                let stored = file.encoding == .zlib ? XarCrafter.zlib(file.data) : file.data
                var archived = Array(Insecure.SHA1.hash(data: stored))
                var extracted = Array(Insecure.SHA1.hash(data: file.data))
                if file.corruptArchivedChecksum { archived[0] ^= 0xFF }
                if file.corruptChecksum { extracted[0] ^= 0xFF }
                xml += "<data>\n<offset>\(offset)</offset>\n<length>\(stored.count)</length>\n"
                if !file.omitSize { xml += "<size>\(file.declaredSize ?? file.data.count)</size>\n" }
                let style = file.encoding == .zlib ? "application/x-gzip" : "application/octet-stream"
                xml += "<encoding style=\"\(style)\"/>\n"
                if !file.omitChecksums {
                    xml += "<archived-checksum style=\"sha1\">\(hex(archived))</archived-checksum>\n"
                    xml += "<extracted-checksum style=\"sha1\">\(hex(extracted))</extracted-checksum>\n"
                }
                xml += "</data>\n"
                heap += stored
                offset += stored.count
            }
            for child in node.children { emit(child) }
            xml += "</file>\n"
        }
        for root in roots { emit(root) }
        xml += "</toc>\n</xar>\n"

        let tocXML = Array(xml.utf8)
        let toc = XarCrafter.zlib(tocXML)
        var out: [UInt8] = Array("xar!".utf8)
        out += be(UInt16(28)) + be(UInt16(1)) + be(UInt64(toc.count)) + be(UInt64(tocXML.count)) + be(UInt32(1))
        out += toc
        out += Array(Insecure.SHA1.hash(data: toc))
        out += heap
        return out
    }

    /// Writes the xar to `path`, optionally cut short to `truncatedTo` bytes.
    @discardableResult
    public func write(to path: String, truncatedTo: Int? = nil) throws -> String {
        var bytes = build()
        if let truncatedTo { bytes = Array(bytes.prefix(truncatedTo)) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// zlib (RFC 1950) compression of `input`.
    public static func zlib(_ input: [UInt8]) -> [UInt8] {
        var destLength = compressBound(uLong(input.count))
        var out = [UInt8](repeating: 0, count: Int(destLength))
        let status = out.withUnsafeMutableBufferPointer { dest in
            input.withUnsafeBufferPointer { source in
                compress2(dest.baseAddress, &destLength, source.baseAddress, uLong(input.count), 6)
            }
        }
        precondition(status == Z_OK, "compress2 failed: \(status)")
        return Array(out.prefix(Int(destLength)))
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    private func be<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}

