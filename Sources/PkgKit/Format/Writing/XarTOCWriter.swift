import Crypto

/// Writes a xar table of contents, streaming it through a deflater into a scratch file while
/// counting its length and computing the sha1 of the compressed bytes (the TOC checksum).
///
/// The XML is built directly as bytes: the TOC's shape is fixed (elements, a few attributes,
/// escaped text), and a general XML writer, called through Swift strings for each of the 15 or
/// so elements of every file, would make this thread the bottleneck of creating a package of many
/// files while the workers compress. One element per line, indented by depth.
final class XarTOCWriter {
    private let sink: Sink
    private var buffer: [UInt8] = []
    /// The open elements, innermost last.
    private var open: [(name: String, hasChildren: Bool)] = []
    /// The innermost element's start tag still takes attributes (`>` not written yet).
    private var tagOpen = false

    static let flushBytes = 64 * 1024

    /// Where the XML goes: deflated into `scratch`.
    final class Sink {
        // The TOC of 100,000 files is tens of MB of XML: ISA-L's level 2 deflates it several
        // times faster than zlib level 6 (libarchive's) where linked.
        package let deflater: StreamDeflater = FastDeflater(level: 2) ?? Deflater(level: 6, outputCapacity: 256 * 1024)
        package let scratch: FileOutput
        package var checksum = Insecure.SHA1()
        var uncompressed: Int64 = 0
        package var compressed: Int64 = 0

        package init(scratch: FileOutput) { self.scratch = scratch }

        package func take(_ bytes: UnsafeRawBufferPointer) throws {
            guard !bytes.isEmpty else { return }
            uncompressed += Int64(bytes.count)
            try deflater.compress(bytes, sink: emit)
        }

        package func emit(_ block: UnsafeRawBufferPointer) throws {
            checksum.update(bufferPointer: block)
            compressed += Int64(block.count)
            try scratch.write(block)
        }
    }

    package init(scratch: FileOutput) throws {
        sink = Sink(scratch: scratch)
        buffer.reserveCapacity(Self.flushBytes + 4096)
        append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
    }

    /// Opens an element.
    package func start(_ name: String) throws {
        if tagOpen { append(">") }
        tagOpen = false
        if !open.isEmpty {
            open[open.count - 1].hasChildren = true
            newline(depth: open.count)
        }
        append("<")
        append(name)
        open.append((name, false))
        tagOpen = true
        try flushIfFull()
    }

    /// Adds an attribute to the open element.
    func attribute(_ name: String, _ value: String) throws {
        precondition(tagOpen, "attributes go on an open start tag")
        append(" ")
        append(name)
        append("=\"")
        escape(value, attribute: true)
        append("\"")
    }

    /// Closes the innermost open element.
    package func end() throws {
        let (name, hasChildren) = open.removeLast()
        if tagOpen {
            append("/>")
        } else {
            if hasChildren { newline(depth: open.count) }
            append("</")
            append(name)
            append(">")
        }
        tagOpen = false
        try flushIfFull()
    }

    /// Writes `<name>text</name>`, escaped.
    package func element(_ name: String, _ text: String) throws {
        try start(name)
        try self.text(text)
        try end()
    }

    /// Writes text into the open element, escaped.
    package func text(_ text: String) throws {
        if tagOpen { append(">") }
        tagOpen = false
        escape(text, attribute: false)
    }

    /// Ends the document and the deflate stream. Returns (compressed length, uncompressed length, sha1).
    package func finish() throws -> (compressed: Int64, uncompressed: Int64, checksum: [UInt8]) {
        precondition(open.isEmpty, "every element is closed")
        append("\n")
        try flush()
        try sink.deflater.finish(sink: sink.emit)
        return (sink.compressed, sink.uncompressed, Array(sink.checksum.finalize()))
    }

    private func newline(depth: Int) {
        // Each access to a class's array is checked at run time: one append per call, not per byte.
        if depth < Self.newlines.count { buffer.append(contentsOf: Self.newlines[depth]) } else {
            buffer.append(contentsOf: [UInt8(ascii: "\n")] + Array(repeating: UInt8(ascii: " "), count: depth))
        }
    }

    private static let newlines = (0..<64).map { [UInt8(ascii: "\n")] + Array(repeating: UInt8(ascii: " "), count: $0) }

    private func append(_ text: String) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
    }

    /// Appends text with `&`, `<`, `>` (and in attributes `"` and white space other than a
    /// space) written as references, as libxml2's writer did.
    private func escape(_ text: String, attribute: Bool) {
        var text = text
        text.withUTF8 { bytes in
            func special(_ byte: UInt8) -> Bool {
                byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") || byte == 0x0D
                    || (attribute && (byte == UInt8(ascii: "\"") || byte == 0x0A || byte == 0x09))
            }
            // Nearly all text (names, numbers, digests) has nothing to escape: one append.
            guard bytes.contains(where: special) else {
                buffer.append(contentsOf: bytes)
                return
            }
            var escaped: [UInt8] = []
            escaped.reserveCapacity(bytes.count + 16)
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "&"): escaped.append(contentsOf: Self.amp)
                case UInt8(ascii: "<"): escaped.append(contentsOf: Self.lt)
                case UInt8(ascii: ">"): escaped.append(contentsOf: Self.gt)
                case 0x0D: escaped.append(contentsOf: Self.cr)
                case UInt8(ascii: "\"") where attribute: escaped.append(contentsOf: Self.quot)
                case 0x0A where attribute: escaped.append(contentsOf: Self.lf)
                case 0x09 where attribute: escaped.append(contentsOf: Self.tab)
                default: escaped.append(byte)
                }
            }
            buffer.append(contentsOf: escaped)
        }
    }

    private static let amp = Array("&amp;".utf8), lt = Array("&lt;".utf8), gt = Array("&gt;".utf8)
    private static let cr = Array("&#13;".utf8), quot = Array("&quot;".utf8)
    private static let lf = Array("&#10;".utf8), tab = Array("&#9;".utf8)

    private func flushIfFull() throws {
        if buffer.count >= Self.flushBytes { try flush() }
    }

    private func flush() throws {
        try buffer.withUnsafeBytes { try sink.take($0) }
        buffer.removeAll(keepingCapacity: true)
    }
}
