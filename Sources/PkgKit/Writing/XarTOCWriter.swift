import Crypto
internal import CXML2

/// Writes a xar table of contents with libxml2, streaming it through zlib into a scratch file
/// while counting its length and computing the sha1 of the compressed bytes (the TOC checksum).
final class XarTOCWriter {
    private let writer: xmlTextWriterPtr
    private let sink: Sink

    /// Where the XML goes: deflated into `scratch`.
    final class Sink {
        // Level 6, as libarchive writes: the TOC of 100,000 files is tens of MB of XML on the
        // critical path, and level 9 buys little on it.
        let deflater = Deflater(level: 6, outputCapacity: 256 * 1024)
        let scratch: FileOutput
        var checksum = Insecure.SHA1()
        var uncompressed: Int64 = 0
        var compressed: Int64 = 0
        var error: Error?

        init(scratch: FileOutput) { self.scratch = scratch }

        var finished = false

        func take(_ bytes: UnsafeRawBufferPointer) {
            // libxml2 flushes again when the writer is freed, after the zlib stream has ended.
            guard !bytes.isEmpty, !finished else { return }
            uncompressed += Int64(bytes.count)
            do { try deflater.compress(bytes, sink: emit) } catch { self.error = error }
        }

        func emit(_ block: UnsafeRawBufferPointer) throws {
            checksum.update(bufferPointer: block)
            compressed += Int64(block.count)
            try scratch.write(block)
        }
    }

    init(scratch: FileOutput) throws {
        LibXMLSetup.ensure()
        sink = Sink(scratch: scratch)
        let context = Unmanaged.passUnretained(sink).toOpaque()
        guard let buffer = xmlOutputBufferCreateIO({ context, bytes, count in
            let sink = Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue()
            sink.take(UnsafeRawBufferPointer(start: bytes, count: Int(count)))
            return sink.error == nil ? count : -1
        }, { _ in 0 }, context, nil), let writer = xmlNewTextWriter(buffer) else {
            throw WriteError.compression("libxml2 could not start the table of contents")
        }
        self.writer = writer
        xmlTextWriterSetIndent(writer, 1)
        try check(xmlTextWriterStartDocument(writer, "1.0", "UTF-8", nil))
    }

    deinit { xmlFreeTextWriter(writer) }

    /// Opens an element.
    func start(_ name: String) throws { try check(xmlTextWriterStartElement(writer, name)) }

    /// Adds an attribute to the open element.
    func attribute(_ name: String, _ value: String) throws { try check(xmlTextWriterWriteAttribute(writer, name, value)) }

    /// Closes the innermost open element.
    func end() throws { try check(xmlTextWriterEndElement(writer)) }

    /// Writes `<name>text</name>`, escaped.
    func element(_ name: String, _ text: String) throws { try check(xmlTextWriterWriteElement(writer, name, text)) }

    /// Writes text into the open element, escaped.
    func text(_ text: String) throws { try check(xmlTextWriterWriteString(writer, text)) }

    /// Ends the document and the zlib stream. Returns (compressed length, uncompressed length, sha1).
    func finish() throws -> (compressed: Int64, uncompressed: Int64, checksum: [UInt8]) {
        try check(xmlTextWriterEndDocument(writer))
        try check(xmlTextWriterFlush(writer))
        if let error = sink.error { throw error }
        try sink.deflater.finish(sink: sink.emit)
        sink.finished = true
        return (sink.compressed, sink.uncompressed, Array(sink.checksum.finalize()))
    }

    private func check(_ status: Int32) throws {
        if let error = sink.error { throw error }
        guard status >= 0 else { throw WriteError.compression("libxml2 failed writing the table of contents") }
    }
}

private func xmlTextWriterStartElement(_ writer: xmlTextWriterPtr, _ name: String) -> Int32 {
    name.withXMLChars { CXML2.xmlTextWriterStartElement(writer, $0) }
}

private func xmlTextWriterWriteAttribute(_ writer: xmlTextWriterPtr, _ name: String, _ value: String) -> Int32 {
    name.withXMLChars { n in value.withXMLChars { v in CXML2.xmlTextWriterWriteAttribute(writer, n, v) } }
}

private func xmlTextWriterWriteElement(_ writer: xmlTextWriterPtr, _ name: String, _ text: String) -> Int32 {
    name.withXMLChars { n in text.withXMLChars { t in CXML2.xmlTextWriterWriteElement(writer, n, t) } }
}

private func xmlTextWriterWriteString(_ writer: xmlTextWriterPtr, _ text: String) -> Int32 {
    text.withXMLChars { CXML2.xmlTextWriterWriteString(writer, $0) }
}

private extension String {
    func withXMLChars<R>(_ body: (UnsafePointer<xmlChar>) -> R) -> R {
        withCString { $0.withMemoryRebound(to: xmlChar.self, capacity: utf8.count + 1, body) }
    }
}
