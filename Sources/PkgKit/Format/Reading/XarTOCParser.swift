import Foundation
internal import CXML2
import PkgKitSupport

/// The state of one parse of a xar TOC, driven by libxml2's SAX2 push parser, which is fed straight
/// from the inflating TOC: no node is built for any element, and only the text of the elements read
/// is kept, in one buffer used again and again.
struct XarTOCParser {
    package typealias Entry = XarTableOfContents.Entry

    package var toc: XarTableOfContents
    package let keepEntries: Bool
    package let visit: ((Entry) -> Void)?
    package var context: xmlParserCtxtPtr?
    package var names: XarTOCInternedNames?
    /// Set when the TOC passed a limit: parsing has been stopped.
    package var failure: XarTOCError?
    var elements: [XarTOCElement] = []
    /// The open `<file>` elements.
    package var open: [(slot: Int, entry: Entry, named: Bool, chunks: (ChunkTable.Declared, [UInt8])?)] = []
    package var count = 0
    var base64Name = false
    /// The text of the innermost element, when it is one whose text is read.
    package var text: [UInt8] = []
    /// The `<chunks>` element being read: its attributes, and its text up to what they allow.
    package var chunks: (declared: ChunkTable.Declared, limit: Int, text: [UInt8])?
    /// Chunks declared so far by accepted tables, against `XarTableOfContents.maxChunks`.
    var chunkCount: Int64 = 0

    package init(toc: XarTableOfContents, keepEntries: Bool, visit: ((Entry) -> Void)?) {
        self.toc = toc
        self.keepEntries = keepEntries
        self.visit = visit
        text.reserveCapacity(256)
    }

    /// Parses the XML `inflater` hands out into `toc`; see `XarTableOfContents.read`.
    package static func parse(_ inflater: XarTOCInflater, into toc: XarTableOfContents, keepEntries: Bool,
                      visit: ((Entry) -> Void)?) throws(XarTOCError) -> XarTableOfContents {
        LibXMLSetup.ensure()
        // The parse state lives behind a pointer: the callbacks reach it as `pointee`, which Swift
        // does not check for exclusive access at run time, as it would a class's fields.
        let parser = UnsafeMutablePointer<XarTOCParser>.allocate(capacity: 1)
        parser.initialize(to: XarTOCParser(toc: toc, keepEntries: keepEntries, visit: visit))
        defer { parser.deinitialize(count: 1).deallocate() }
        var sax = xmlSAXHandler()
        sax.initialized = XML_SAX2_MAGIC
        sax.startElementNs = { context, name, _, _, _, _, attributeCount, _, attributes in
            context!.assumingMemoryBound(to: XarTOCParser.self).pointee.start(name, attributeCount, attributes)
        }
        sax.endElementNs = { context, _, _, _ in
            context!.assumingMemoryBound(to: XarTOCParser.self).pointee.end()
        }
        sax.characters = { context, bytes, count in
            context!.assumingMemoryBound(to: XarTOCParser.self).pointee.characters(bytes, count)
        }
        sax.cdataBlock = sax.characters
        guard let parserContext = xmlCreatePushParserCtxt(&sax, parser, nil, 0, nil) else {
            throw XarTOCError.unreadable("libxml2 could not start a parser")
        }
        defer {
            if let document = parserContext.pointee.myDoc { xmlFreeDoc(document) }
            xmlFreeParserCtxt(parserContext)
        }
        xmlCtxtUseOptions(parserContext, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOBLANKS.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue))
        parser.pointee.context = parserContext
        parser.pointee.names = XarTOCInternedNames(parserContext.pointee.dict)
        while true {
            let chunk = try inflater.next()
            let status = xmlParseChunk(parserContext, chunk.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(chunk.count), chunk.isEmpty ? 1 : 0)
            if let failure = parser.pointee.failure { throw failure }
            if status != 0 { throw malformed(parserContext) }
            if chunk.isEmpty { break }
        }
        guard parserContext.pointee.wellFormed != 0 else { throw malformed(parserContext) }
        guard parser.pointee.open.isEmpty else { throw XarTOCError.malformed("the table of contents ends inside a <file> element") }
        return parser.pointee.toc
    }

    /// The XML is not well formed, in libxml2's words.
    private static func malformed(_ context: xmlParserCtxtPtr) -> XarTOCError {
        guard let error = xmlCtxtGetLastError(context), let message = error.pointee.message else {
            return .malformed("the table of contents is not well-formed XML")
        }
        var words = String(cString: message)
        while words.last?.isNewline == true || words.last == " " { words.removeLast() }
        return .malformed("the table of contents is not well-formed XML (libxml2: \(words), line \(error.pointee.line))")
    }

    package mutating func fail(_ limit: XarTOCError.Limit) {
        failure = .limitPassed(limit)
        if let context { xmlStopParser(context) }
    }

    package mutating func start(_ name: UnsafePointer<xmlChar>?, _ attributeCount: Int32, _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        guard failure == nil else { return }
        let element = names?.classify(name, inside: elements.last) ?? XarTOCElement.classify(name, inside: elements.last)
        switch element {
        case .file:
            guard count < XarTableOfContents.maxEntries else { return fail(.entries) }
            count += 1
            // The slot keeps document order (folders before their contents).
            if keepEntries { toc.entries.append(Entry()) }
            var entry = Entry()
            entry.order = count - 1
            entry.parent = open.last?.entry.order ?? -1
            open.append((toc.entries.count - 1, entry, false, nil))
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
        case .chunks:
            chunks = nil
            var declared = ChunkTable.Declared()
            declared.style = attribute("style", attributeCount, attributes)
            func number(_ name: StaticString) -> Int64? {
                attribute(name, attributeCount, attributes).flatMap { Self.decimal(Array($0.utf8)) }
            }
            (declared.minimumSize, declared.averageSize, declared.maximumSize) = (number("min"), number("avg"), number("max"))
            (declared.dataStart, declared.count) = (number("start"), number("count"))
            if !open.isEmpty, let limit = declared.textLimit, chunkCount + declared.count! <= XarTableOfContents.maxChunks {
                chunks = (declared, limit, [])
            }
        default:
            break
        }
        elements.append(element)
        if !text.isEmpty { text.removeAll(keepingCapacity: true) }
        guard elements.count < XarTableOfContents.maxDepth else { return fail(.depth) }
    }

    package mutating func characters(_ bytes: UnsafePointer<xmlChar>?, _ length: Int32) {
        guard failure == nil, let bytes, length > 0, let top = elements.last, top != .other, top != .file, top != .data else { return }
        if top == .chunks {
            // A table longer than its count allows is not one: dropped whole.
            guard chunks != nil else { return }
            if chunks!.text.count + Int(length) > chunks!.limit { chunks = nil } else { chunks!.text.append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(length))) }
            return
        }
        // No text read is longer than a path cut at `maxPathBytes`; more is not kept.
        let room = XarTableOfContents.maxPathBytes + 1 - text.count
        if room > 0 { text.append(contentsOf: UnsafeBufferPointer(start: bytes, count: min(Int(length), room))) }
    }

    package mutating func end() {
        guard failure == nil, let top = elements.popLast() else { return }
        defer { if !text.isEmpty { text.removeAll(keepingCapacity: true) } }
        if top == .file {
            var file = open.removeLast()
            if let (declared, text) = file.chunks {
                let entry = file.entry
                file.entry.chunks = ChunkTable(declared: declared, text: text, size: entry.size ?? -1, length: entry.length ?? -1,
                                               gzip: entry.encoding == "application/x-gzip")
            }
            if keepEntries { toc.entries[file.slot] = file.entry }
            visit?(file.entry)
            return
        }
        if top == .checksumOffset || top == .checksumSize {
            guard open.isEmpty else { return }
            let number = Self.decimal(text)
            if top == .checksumOffset { toc.checksumOffset = number } else { toc.checksumSize = number }
            return
        }
        guard !open.isEmpty else { return }
        let index = open.count - 1
        switch top {
        case .chunks:
            if let chunks {
                open[index].chunks = (chunks.declared, chunks.text)
                chunkCount += chunks.declared.count ?? 0
            }
            chunks = nil
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
            if path.count > XarTableOfContents.maxPathBytes { path.removeSubrange(XarTableOfContents.maxPathBytes...) }
            open[index].entry.pathBytes = path
        case .link: open[index].entry.linkTarget = text
        case .type: open[index].entry.type = String(decoding: text, as: UTF8.self)
        case .mode: open[index].entry.mode = Self.octal(text)
        case .archivedChecksum: open[index].entry.archivedChecksum = lowercaseText()
        case .extractedChecksum: open[index].entry.extractedChecksum = lowercaseText()
        case .length: open[index].entry.length = Self.decimal(text)
        case .offset: open[index].entry.offset = Self.decimal(text)
        case .size: open[index].entry.size = Self.decimal(text)
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
}
