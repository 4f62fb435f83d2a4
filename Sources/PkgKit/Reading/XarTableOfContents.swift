import Foundation
internal import CXML2
internal import CZlib

/// A xar table of contents as data: every `<file>` with the facts libarchive does not expose
/// (stored length, heap offset, encoding, checksums). Read with libxml2's streaming reader
/// straight from the inflating TOC, so the XML is never held whole.
public struct XarTableOfContents: Sendable {
    /// One `<file>` element.
    public struct Entry: Sendable {
        /// Position in document order (folders before their contents).
        public var order = 0
        /// The full path's bytes, components joined with `/`.
        public var pathBytes: [UInt8] = []
        /// The `<name>` alone.
        public var name: [UInt8] = []
        /// The `order` of the enclosing `<file>`, or -1 at the top.
        public var parent = -1
        /// The full path as text.
        public var path: String { String(decoding: pathBytes, as: UTF8.self) }
        /// The xar type (`file`, `directory`, `symlink`, …).
        public var type = ""
        /// `<mode>`: permission bits, read as octal.
        public var mode: UInt32?
        /// `<link>`: a symbolic link's target.
        public var linkTarget: [UInt8]?
        /// `<data><size>`: bytes once unpacked.
        public var size: Int64?
        /// `<data><length>`: bytes stored in the heap.
        public var length: Int64?
        /// `<data><offset>`: where the stored bytes start, from the heap's start.
        public var offset: Int64?
        /// `<encoding style>`.
        public var encoding: String?
        /// `<archived-checksum>`'s style and hex digest (of the stored bytes).
        public var archivedStyle: String?
        public var archivedChecksum: String?
        /// `<extracted-checksum>`'s style and hex digest (of the unpacked bytes).
        public var extractedStyle: String?
        public var extractedChecksum: String?
    }

    /// The TOC checksum style (`sha1`, `md5`, …).
    public var checksumStyle: String?
    /// Where the TOC's own checksum lies in the heap, and its length.
    public var checksumOffset: Int64?
    public var checksumSize: Int64?
    /// The header's checksum algorithm number (0 none, 1 sha1, 2 md5, 3 named in the header).
    public var headerChecksumAlgorithm: UInt32 = 0
    /// The compressed TOC's length, as the header gives it.
    public var compressedLength: Int64 = 0
    /// Where the heap starts in the file: every data offset counts from here.
    public var heapStart: Int64 = 0
    /// Every `<file>`, parents before their children, in document order.
    public var entries: [Entry] = []

    /// The most TOC XML read, whatever the header claims.
    static let maxTOCBytes: Int64 = 512 << 20
    /// The most `<file>` elements accepted.
    static let maxEntries = 1_000_000
    /// The longest path kept: longer ones are cut here and refused by every reader.
    static let maxPathBytes = 4 * PackageLimits.maxPathBytes + 1
    /// The deepest element nesting accepted.
    static let maxDepth = 600

    /// The entry at `path`, if any.
    public func entry(_ path: String) -> Entry? { entries.first { $0.pathBytes.elementsEqual(path.utf8) } }

    private enum Element {
        case file, name, type, mode, link, data, length, offset, size, encoding, archivedChecksum, extractedChecksum
        case checksum, checksumOffset, checksumSize, other
    }

    /// Reads the TOC of the xar at `path`, or returns nil when it is not a readable xar.
    /// Each `<file>` is handed to `visit` when it closes (children before their folder); with
    /// `keepEntries: false` none is kept, so memory does not grow with the package.
    public static func read(_ path: String, keepEntries: Bool = true, visit: ((Entry) -> Void)? = nil) -> XarTableOfContents? {
        LibXMLSetup.ensure()
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 28), header.count == 28, header.prefix(4) == Data("xar!".utf8) else { return nil }
        let source = InflatingSource(handle: handle)
        let context = Unmanaged.passUnretained(source).toOpaque()
        guard let reader = xmlReaderForIO({ context, buffer, length in
            Unmanaged<InflatingSource>.fromOpaque(context!).takeUnretainedValue().read(buffer!, Int(length))
        }, { _ in 0 }, context, nil, nil, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOBLANKS.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)) else { return nil }
        defer { xmlFreeTextReader(reader) }
        var toc = XarTableOfContents()
        // A hostile header can claim any length: keep the heap start a sane, positive number.
        let tocLength = header[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard tocLength <= UInt64(Int64.max - 28) else { return nil }
        toc.heapStart = 28 + Int64(tocLength)
        toc.compressedLength = Int64(tocLength)
        toc.headerChecksumAlgorithm = header[24..<28].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        // A header longer than 28 bytes moves the TOC; pkgtool reads only the standard layout.
        guard header[4] == 0, header[5] == 28 else { return nil }
        var elements: [Element] = []
        func close(_ file: (slot: Int, entry: Entry, named: Bool)) {
            if keepEntries { toc.entries[file.slot] = file.entry }
            visit?(file.entry)
        }
        var open: [(slot: Int, entry: Entry, named: Bool)] = []   // the open <file> elements
        var count = 0
        var base64Name = false
        while xmlTextReaderRead(reader) == 1 {
            switch xmlTextReaderNodeType(reader) {
            case 1: // element start
                let element = classify(xmlTextReaderConstLocalName(reader), inside: elements.last)
                switch element {
                case .file:
                    guard count < maxEntries else { return nil }
                    count += 1
                    // The slot keeps document order (folders before their contents).
                    if keepEntries { toc.entries.append(Entry()) }
                    var entry = Entry()
                    entry.order = count - 1
                    entry.parent = open.last?.entry.order ?? -1
                    open.append((toc.entries.count - 1, entry, false))
                case .name:
                    base64Name = attribute(reader, "enctype") == "base64"
                case .encoding:
                    if !open.isEmpty { open[open.count - 1].entry.encoding = attribute(reader, "style") }
                case .extractedChecksum:
                    if !open.isEmpty { open[open.count - 1].entry.extractedStyle = attribute(reader, "style") }
                case .archivedChecksum:
                    if !open.isEmpty { open[open.count - 1].entry.archivedStyle = attribute(reader, "style") }
                case .checksum where open.isEmpty:
                    toc.checksumStyle = attribute(reader, "style")
                default:
                    break
                }
                if xmlTextReaderIsEmptyElement(reader) == 1 {
                    if element == .file { close(open.removeLast()) }
                } else {
                    elements.append(element)
                    guard elements.count < maxDepth else { return nil }
                }
            case 3, 4: // text, CDATA
                guard let top = elements.last else { continue }
                let value = xmlTextReaderConstValue(reader)
                if top == .checksumOffset || top == .checksumSize {
                    guard open.isEmpty else { continue }
                    let number = value.flatMap { Int64(String(cString: $0)) }
                    if top == .checksumOffset { toc.checksumOffset = number } else { toc.checksumSize = number }
                    continue
                }
                guard !open.isEmpty else { continue }
                let index = open.count - 1
                if top == .name || top == .link {
                    var bytes = value.map { Array(UnsafeBufferPointer(start: $0, count: strlen(UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)))) } ?? []
                    if top == .link { open[index].entry.linkTarget = bytes; continue }
                    // libarchive 3.6.2 joins repeated <name>s; real packages repeat them. The first counts.
                    guard !open[index].named else { continue }
                    open[index].named = true
                    if base64Name, let data = Data(base64Encoded: Data(bytes)) { bytes = Array(data) }
                    open[index].entry.name = bytes
                    let parent = open.count > 1 ? open[open.count - 2].entry.pathBytes : []
                    var path = parent.isEmpty ? bytes : parent + [UInt8(ascii: "/")] + bytes
                    // A hostile TOC can nest long names deeply: past any path a reader accepts,
                    // the path is cut, so that every entry's copy stays small.
                    if path.count > maxPathBytes { path.removeSubrange(maxPathBytes...) }
                    open[index].entry.pathBytes = path
                    continue
                }
                // Only the elements read are turned into Swift values: a TOC is mostly other text.
                func text() -> String { value.map { String(cString: $0) } ?? "" }
                switch top {
                case .type: open[index].entry.type = text()
                case .mode: open[index].entry.mode = octal(value)
                case .archivedChecksum: open[index].entry.archivedChecksum = text().lowercased()
                case .length: open[index].entry.length = Int64(text())
                case .offset: open[index].entry.offset = Int64(text())
                case .size: open[index].entry.size = Int64(text())
                case .extractedChecksum: open[index].entry.extractedChecksum = text().lowercased()
                default: break
                }
            case 15: // element end
                if elements.popLast() == .file { close(open.removeLast()) }
            default:
                break
            }
            if source.total > maxTOCBytes { return nil }
        }
        return source.failed ? nil : toc
    }

    /// An octal number with optional blanks around it (`<mode>0644</mode>`); nil when it is not one.
    private static func octal(_ text: UnsafePointer<xmlChar>?) -> UInt32? {
        guard var cursor = text else { return nil }
        var value: UInt32 = 0
        var digits = 0
        while cursor.pointee == 0x20 || cursor.pointee == 0x09 || cursor.pointee == 0x0A { cursor += 1 }
        while cursor.pointee >= UInt8(ascii: "0") && cursor.pointee <= UInt8(ascii: "7") {
            guard digits < 11 else { return nil }
            value = value << 3 | UInt32(cursor.pointee - UInt8(ascii: "0"))
            digits += 1
            cursor += 1
        }
        while cursor.pointee == 0x20 || cursor.pointee == 0x09 || cursor.pointee == 0x0A { cursor += 1 }
        return digits > 0 && cursor.pointee == 0 ? value : nil
    }

    /// What an element is, judged by its name and the element it sits in.
    private static func classify(_ name: UnsafePointer<xmlChar>?, inside parent: Element?) -> Element {
        guard let name else { return .other }
        func equals(_ text: StaticString) -> Bool {
            strcmp(UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self), UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)) == 0
        }
        if equals("file") { return .file }
        switch parent {
        case .file:
            if equals("name") { return .name }
            if equals("type") { return .type }
            if equals("mode") { return .mode }
            if equals("link") { return .link }
            if equals("data") { return .data }
        case .data:
            if equals("length") { return .length }
            if equals("offset") { return .offset }
            if equals("size") { return .size }
            if equals("encoding") { return .encoding }
            if equals("extracted-checksum") { return .extractedChecksum }
            if equals("archived-checksum") { return .archivedChecksum }
        case .checksum:
            if equals("offset") { return .checksumOffset }
            if equals("size") { return .checksumSize }
        default:
            if equals("checksum") { return .checksum }
        }
        return .other
    }

    private static func attribute(_ reader: xmlTextReaderPtr, _ name: String) -> String? {
        guard let value = name.withCString({ xmlTextReaderGetAttribute(reader, UnsafeRawPointer($0).assumingMemoryBound(to: xmlChar.self)) }) else { return nil }
        defer { CXML2_free(value) }
        return String(cString: value)
    }
}

/// Inflates the zlib TOC that starts at byte 28 of a xar file, on demand.
private final class InflatingSource {
    let handle: FileHandle
    var stream = z_stream()
    let input = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    var ended = false
    var failed = false
    var total: Int64 = 0

    init(handle: FileHandle) {
        self.handle = handle
        CZlib_inflateInit(&stream)
    }

    deinit {
        inflateEnd(&stream)
        input.deallocate()
    }

    func read(_ buffer: UnsafeMutablePointer<CChar>, _ length: Int) -> Int32 {
        if ended || failed { return 0 }
        var produced = 0
        while produced == 0 {
            if stream.avail_in == 0 {
                guard let chunk = try? handle.read(upToCount: input.count), !chunk.isEmpty else { failed = true; return -1 }
                chunk.copyBytes(to: input)
                stream.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.avail_in = uInt(chunk.count)
            }
            stream.next_out = UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(length)
            let status = inflate(&stream, Z_NO_FLUSH)
            produced = length - Int(stream.avail_out)
            if status == Z_STREAM_END { ended = true; break }
            if status != Z_OK { failed = true; return -1 }
        }
        total += Int64(produced)
        return Int32(produced)
    }
}
