import Foundation
internal import CXML2
internal import CZlib

/// The parts of a xar table of contents that libarchive does not expose: each file's stored
/// length, encoding and checksum style. Read with libxml2's streaming reader straight from the
/// inflating TOC, so the XML is never held whole.
public struct XarTableOfContents: Sendable {
    /// One `<file>` with `<data>`.
    public struct FileData: Sendable {
        public var length: Int64
        public var offset: Int64 = 0
        public var encoding: String?
        public var checksumStyle: String?
    }

    /// The TOC checksum style (`sha1`, `md5`, …).
    public var checksumStyle: String?
    /// Where the heap starts in the file: every data offset counts from here.
    public var heapStart: Int64 = 0
    /// Data facts by package path.
    public var files: [String: FileData] = [:]

    /// The most TOC XML read, whatever the header claims.
    static let maxTOCBytes: Int64 = 512 << 20

    /// Reads the TOC of the xar at `path`, or returns nil when it is not a readable xar.
    public static func read(_ path: String) -> XarTableOfContents? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 28), header.count == 28, header.prefix(4) == Data("xar!".utf8) else { return nil }
        let source = InflatingSource(handle: handle)
        let context = Unmanaged.passUnretained(source).toOpaque()
        guard let reader = xmlReaderForIO({ context, buffer, length in
            Unmanaged<InflatingSource>.fromOpaque(context!).takeUnretainedValue().read(buffer!, Int(length))
        }, { _ in 0 }, context, nil, nil, Int32(XML_PARSE_NONET.rawValue)) else { return nil }
        defer { xmlFreeTextReader(reader) }
        var toc = XarTableOfContents()
        toc.heapStart = 28 + header[8..<16].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        var stack: [String] = []
        var names: [String] = []
        var nameDepths: [Int] = []
        var current: FileData?
        var currentElement = ""
        var pendingNameBase64 = false
        while xmlTextReaderRead(reader) == 1 {
            let type = xmlTextReaderNodeType(reader)
            let name = xmlTextReaderConstLocalName(reader).map { String(cString: $0) } ?? ""
            switch type {
            case 1: // element
                let empty = xmlTextReaderIsEmptyElement(reader) == 1
                currentElement = name
                if name == "file" { current = FileData(length: 0) }
                if name == "checksum" && stack == ["xar", "toc"] { toc.checksumStyle = attribute(reader, "style") }
                if name == "encoding" { current?.encoding = attribute(reader, "style") }
                if name == "extracted-checksum" { current?.checksumStyle = attribute(reader, "style") }
                if name == "name" { pendingNameBase64 = attribute(reader, "enctype") == "base64" }
                if !empty { stack.append(name) }
            case 3, 4: // text
                let text = xmlTextReaderConstValue(reader).map { String(cString: $0) } ?? ""
                if currentElement == "name", stack.last == "name" {
                    var value = text
                    if pendingNameBase64, let data = Data(base64Encoded: text) { value = String(decoding: data, as: UTF8.self) }
                    // A name counts once per <file>: libarchive 3.6.2 joins repeated names.
                    let fileDepth = stack.filter { $0 == "file" }.count
                    if nameDepths.last != fileDepth { names.append(value); nameDepths.append(fileDepth) }
                } else if currentElement == "length", stack.suffix(2) == ["data", "length"] {
                    current?.length = Int64(text) ?? 0
                } else if currentElement == "offset", stack.suffix(2) == ["data", "offset"] {
                    current?.offset = Int64(text) ?? 0
                }
            case 15: // end element
                if stack.last == name { stack.removeLast() }
                if name == "file" {
                    let fileDepth = stack.filter { $0 == "file" }.count + 1
                    if let current, current.encoding != nil || current.length > 0 {
                        toc.files[names.joined(separator: "/")] = current
                    }
                    if nameDepths.last == fileDepth { names.removeLast(); nameDepths.removeLast() }
                    current = nil
                }
                currentElement = ""
            default:
                break
            }
            if source.total > maxTOCBytes { return nil }
        }
        return source.failed ? nil : toc
    }

    private static func attribute(_ reader: xmlTextReaderPtr, _ name: String) -> String? {
        guard let value = name.withCString({ xmlTextReaderGetAttribute(reader, UnsafeRawPointer($0).assumingMemoryBound(to: xmlChar.self)) }) else { return nil }
        defer { xmlFree(value) }
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
