import Foundation
internal import CXML2

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

    fileprivate enum Element {
        case file, name, type, mode, link, data, length, offset, size, encoding, archivedChecksum, extractedChecksum
        case checksum, checksumOffset, checksumSize, other
    }

    /// The bytes of a xar header in the standard layout.
    static let headerSize = 28

    /// The compressed TOC's length and the checksum algorithm a xar header gives; nil when the
    /// bytes are no xar header in the standard layout (a longer header moves the TOC, and pkgtool
    /// reads only that layout).
    static func header(_ bytes: [UInt8]) -> (tocLength: Int64, checksumAlgorithm: UInt32)? {
        guard bytes.count == headerSize, bytes.starts(with: "xar!".utf8), bytes[4] == 0, bytes[5] == UInt8(headerSize) else { return nil }
        let tocLength = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        // A hostile header can claim any length: keep the heap start a sane, positive number.
        guard tocLength <= UInt64(Int64.max - Int64(headerSize)) else { return nil }
        return (Int64(tocLength), bytes[24..<28].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    /// Reads the TOC of the xar file at `path`; see `read(_:keepEntries:visit:)`.
    public static func read(_ path: String, keepEntries: Bool = true, visit: ((Entry) -> Void)? = nil) -> XarTableOfContents? {
        guard let file = try? PackageFile(path: path) else { return nil }
        return read(file, keepEntries: keepEntries, visit: visit)
    }

    /// Reads the TOC of the xar in `bytes`, or returns nil when it is not a readable xar.
    /// Each `<file>` is handed to `visit` when it closes (children before their folder); with
    /// `keepEntries: false` none is kept, so memory does not grow with the package.
    ///
    /// libxml2's SAX2 push parser is fed straight from the inflating TOC: no node is built for
    /// any element (its text reader built and freed one per element, most of a 100,000-file
    /// TOC's parse), and only the text of the elements read is kept, in one reused buffer.
    public static func read(_ bytes: PackageBytes, keepEntries: Bool = true, visit: ((Entry) -> Void)? = nil) -> XarTableOfContents? {
        LibXMLSetup.ensure()
        var first = [UInt8](repeating: 0, count: headerSize)
        guard first.withUnsafeMutableBytes({ try? bytes.readChecked(into: $0, at: 0) }) == headerSize,
              let header = header(first) else { return nil }
        var toc = XarTableOfContents()
        toc.heapStart = Int64(headerSize) + header.tocLength
        toc.compressedLength = header.tocLength
        toc.headerChecksumAlgorithm = header.checksumAlgorithm

        let source = XarTOCInflater(bytes: bytes, maxBytes: maxTOCBytes)
        defer { source.stop() }
        // The parse state lives behind a pointer: the callbacks reach it as `pointee`, which
        // Swift does not check for exclusive access at run time, as it would a class's fields
        // (a fifth of the parse when it was one).
        let parser = UnsafeMutablePointer<TOCParser>.allocate(capacity: 1)
        parser.initialize(to: TOCParser(toc: toc, keepEntries: keepEntries, visit: visit))
        defer { parser.deinitialize(count: 1).deallocate() }
        var sax = xmlSAXHandler()
        sax.initialized = XML_SAX2_MAGIC
        sax.startElementNs = { context, name, _, _, _, _, attributeCount, _, attributes in
            context!.assumingMemoryBound(to: TOCParser.self).pointee.start(name, attributeCount, attributes)
        }
        sax.endElementNs = { context, _, _, _ in
            context!.assumingMemoryBound(to: TOCParser.self).pointee.end()
        }
        sax.characters = { context, bytes, count in
            context!.assumingMemoryBound(to: TOCParser.self).pointee.characters(bytes, count)
        }
        sax.cdataBlock = sax.characters
        guard let parserContext = xmlCreatePushParserCtxt(&sax, parser, nil, 0, nil) else { return nil }
        defer {
            if let document = parserContext.pointee.myDoc { xmlFreeDoc(document) }
            xmlFreeParserCtxt(parserContext)
        }
        xmlCtxtUseOptions(parserContext, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOBLANKS.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue))
        parser.pointee.context = parserContext
        parser.pointee.names = InternedNames(parserContext.pointee.dict)
        while true {
            guard let chunk = source.next() else { return nil }
            let status = xmlParseChunk(parserContext, chunk.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(chunk.count), chunk.isEmpty ? 1 : 0)
            if status != 0 || parser.pointee.failed { return nil }
            if chunk.isEmpty { break }
        }
        guard parserContext.pointee.wellFormed != 0, parser.pointee.open.isEmpty else { return nil }
        return parser.pointee.toc
    }

    /// The state of one parse, driven by libxml2's SAX callbacks.
    private struct TOCParser {
        var toc: XarTableOfContents
        let keepEntries: Bool
        let visit: ((Entry) -> Void)?
        var context: xmlParserCtxtPtr?
        var names: InternedNames?
        var failed = false
        var elements: [Element] = []
        /// The open `<file>` elements.
        var open: [(slot: Int, entry: Entry, named: Bool)] = []
        var count = 0
        var base64Name = false
        /// The text of the innermost element, when it is one whose text is read.
        var text: [UInt8] = []

        init(toc: XarTableOfContents, keepEntries: Bool, visit: ((Entry) -> Void)?) {
            self.toc = toc
            self.keepEntries = keepEntries
            self.visit = visit
            text.reserveCapacity(256)
        }

        mutating func fail() {
            failed = true
            if let context { xmlStopParser(context) }
        }

        mutating func start(_ name: UnsafePointer<xmlChar>?, _ attributeCount: Int32, _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
            guard !failed else { return }
            let element = names?.classify(name, inside: elements.last) ?? classify(name, inside: elements.last)
            switch element {
            case .file:
                guard count < maxEntries else { return fail() }
                count += 1
                // The slot keeps document order (folders before their contents).
                if keepEntries { toc.entries.append(Entry()) }
                var entry = Entry()
                entry.order = count - 1
                entry.parent = open.last?.entry.order ?? -1
                open.append((toc.entries.count - 1, entry, false))
            case .name:
                base64Name = attribute("enctype", attributeCount, attributes) == "base64"
            case .encoding:
                if !open.isEmpty { open[open.count - 1].entry.encoding = attribute("style", attributeCount, attributes) }
            case .extractedChecksum:
                if !open.isEmpty { open[open.count - 1].entry.extractedStyle = attribute("style", attributeCount, attributes) }
            case .archivedChecksum:
                if !open.isEmpty { open[open.count - 1].entry.archivedStyle = attribute("style", attributeCount, attributes) }
            case .checksum where open.isEmpty:
                toc.checksumStyle = attribute("style", attributeCount, attributes)
            default:
                break
            }
            elements.append(element)
            if !text.isEmpty { text.removeAll(keepingCapacity: true) }
            guard elements.count < maxDepth else { return fail() }
        }

        mutating func characters(_ bytes: UnsafePointer<xmlChar>?, _ length: Int32) {
            guard !failed, let bytes, length > 0, let top = elements.last, top != .other, top != .file, top != .data else { return }
            // No text read is longer than a path cut at `maxPathBytes`; more is not kept.
            let room = maxPathBytes + 1 - text.count
            if room > 0 { text.append(contentsOf: UnsafeBufferPointer(start: bytes, count: min(Int(length), room))) }
        }

        mutating func end() {
            guard !failed, let top = elements.popLast() else { return }
            defer { if !text.isEmpty { text.removeAll(keepingCapacity: true) } }
            if top == .file {
                let file = open.removeLast()
                if keepEntries { toc.entries[file.slot] = file.entry }
                visit?(file.entry)
                return
            }
            if top == .checksumOffset || top == .checksumSize {
                guard open.isEmpty else { return }
                let number = decimal(text)
                if top == .checksumOffset { toc.checksumOffset = number } else { toc.checksumSize = number }
                return
            }
            guard !open.isEmpty else { return }
            let index = open.count - 1
            switch top {
            case .name:
                // libarchive 3.6.2 joins repeated <name>s; real packages repeat them. The first counts.
                guard !open[index].named else { return }
                open[index].named = true
                var bytes = text
                if base64Name, let data = Data(base64Encoded: Data(bytes)) { bytes = Array(data) }
                open[index].entry.name = bytes
                let parent = open.count > 1 ? open[open.count - 2].entry.pathBytes : []
                var path = parent
                if !path.isEmpty { path.append(UInt8(ascii: "/")) }
                path += bytes
                // A hostile TOC can nest long names deeply: past any path a reader accepts,
                // the path is cut, so that every entry's copy stays small.
                if path.count > maxPathBytes { path.removeSubrange(maxPathBytes...) }
                open[index].entry.pathBytes = path
            case .link: open[index].entry.linkTarget = text
            case .type: open[index].entry.type = String(decoding: text, as: UTF8.self)
            case .mode: open[index].entry.mode = octal(text)
            case .archivedChecksum: open[index].entry.archivedChecksum = lowercaseText()
            case .extractedChecksum: open[index].entry.extractedChecksum = lowercaseText()
            case .length: open[index].entry.length = decimal(text)
            case .offset: open[index].entry.offset = decimal(text)
            case .size: open[index].entry.size = decimal(text)
            default: break
            }
        }

        /// The text as lowercase ASCII (hex digests), without going through Unicode case mapping.
        private func lowercaseText() -> String {
            if text.allSatisfy({ $0 < 0x80 }) {
                return String(unsafeUninitializedCapacity: text.count) { lowered in
                    for (index, byte) in text.enumerated() { lowered[index] = byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte }
                    return text.count
                }
            }
            return String(decoding: text, as: UTF8.self).lowercased()
        }

        private func attribute(_ wanted: StaticString, _ count: Int32, _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) -> String? {
            guard let attributes else { return nil }
            // Five pointers per attribute: local name, prefix, URI, value start, value end.
            for index in 0..<Int(count) {
                guard let name = attributes[5 * index], let start = attributes[5 * index + 3], let end = attributes[5 * index + 4] else { continue }
                if strcmp(UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self), UnsafeRawPointer(wanted.utf8Start).assumingMemoryBound(to: CChar.self)) == 0 {
                    return String(decoding: UnsafeBufferPointer(start: start, count: end - start), as: UTF8.self)
                }
            }
            return nil
        }
    }

    /// A decimal number as `Int64(String)` reads one (an optional sign, digits, nothing else);
    /// nil otherwise or on overflow.
    static func decimal(_ text: [UInt8]) -> Int64? {
        var digits = text[...]
        var negative = false
        if let first = digits.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty else { return nil }
        var value: Int64 = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0") && digit <= UInt8(ascii: "9") else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = negative ? times.subtractingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
                                            : times.addingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
            guard !overflow, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    /// An octal number with optional blanks around it (`<mode>0644</mode>`); nil when it is not one.
    static func octal(_ text: [UInt8]) -> UInt32? {
        var value: UInt32 = 0
        var digits = 0
        var index = 0
        func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A }
        while index < text.count, blank(text[index]) { index += 1 }
        while index < text.count, text[index] >= UInt8(ascii: "0"), text[index] <= UInt8(ascii: "7") {
            guard digits < 11 else { return nil }
            value = value << 3 | UInt32(text[index] - UInt8(ascii: "0"))
            digits += 1
            index += 1
        }
        while index < text.count, blank(text[index]) { index += 1 }
        return digits > 0 && index == text.count ? value : nil
    }

    /// The element names read.
    fileprivate enum Name: Int, CaseIterable {
        case file, name, type, mode, link, data, length, offset, size, encoding, archivedChecksum, extractedChecksum, checksum

        var text: StaticString {
            switch self {
            case .file: "file"
            case .name: "name"
            case .type: "type"
            case .mode: "mode"
            case .link: "link"
            case .data: "data"
            case .length: "length"
            case .offset: "offset"
            case .size: "size"
            case .encoding: "encoding"
            case .archivedChecksum: "archived-checksum"
            case .extractedChecksum: "extracted-checksum"
            case .checksum: "checksum"
            }
        }
    }

    /// The element names read, as the parser's dictionary holds them. libxml2 hands SAX2
    /// callbacks names from that dictionary, one copy per name, so comparing pointers tells them
    /// apart; on a 100,000-file TOC the `strcmp`s this saves were a tenth of the parse.
    fileprivate struct InternedNames {
        let dictionary: xmlDictPtr
        let pointers: [UnsafePointer<xmlChar>?]

        init?(_ dictionary: xmlDictPtr?) {
            guard let dictionary else { return nil }
            self.dictionary = dictionary
            pointers = Name.allCases.map { xmlDictLookup(dictionary, $0.text.utf8Start, Int32($0.text.utf8CodeUnitCount)) }
        }

        /// What `classify` says, or nil for a name the dictionary does not hold (then it is
        /// compared by its text).
        func classify(_ element: UnsafePointer<xmlChar>?, inside parent: Element?) -> Element? {
            guard let element else { return .other }
            let found = XarTableOfContents.classify(inside: parent) { element == pointers[$0.rawValue] }
            return found != .other || xmlDictOwns(dictionary, element) == 1 ? found : nil
        }
    }

    /// What an element is, judged by its name and the element it sits in.
    fileprivate static func classify(_ name: UnsafePointer<xmlChar>?, inside parent: Element?) -> Element {
        guard let name else { return .other }
        return classify(inside: parent) {
            strcmp(UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self), UnsafeRawPointer($0.text.utf8Start).assumingMemoryBound(to: CChar.self)) == 0
        }
    }

    /// What an element whose name is `named` is, inside `parent`.
    @inline(__always)
    private static func classify(inside parent: Element?, _ named: (Name) -> Bool) -> Element {
        if named(.file) { return .file }
        switch parent {
        case .file:
            if named(.name) { return .name }
            if named(.type) { return .type }
            if named(.mode) { return .mode }
            if named(.link) { return .link }
            if named(.data) { return .data }
        case .data:
            if named(.length) { return .length }
            if named(.offset) { return .offset }
            if named(.size) { return .size }
            if named(.encoding) { return .encoding }
            if named(.extractedChecksum) { return .extractedChecksum }
            if named(.archivedChecksum) { return .archivedChecksum }
        case .checksum:
            if named(.offset) { return .checksumOffset }
            if named(.size) { return .checksumSize }
        default:
            if named(.checksum) { return .checksum }
        }
        return .other
    }
}
